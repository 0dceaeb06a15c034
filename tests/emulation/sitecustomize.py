"""Every Python process started with this folder on PYTHONPATH and EMULATE_OS=macos or
windows runs as emulate_os.py says."""
import os

if os.environ.get("EMULATE_OS"):
    import emulate_os
    emulate_os.apply(os.environ["EMULATE_OS"])
