@echo off
rem The plugin's way to this installation of codebase-rag from Windows' own shells (codebase-rag
rem beside this file does the same for POSIX shells and Git Bash): a checkout's own .venv, else
rem the codebase-rag command on PATH (pip install or pipx install of this project).
setlocal
set "root=%~dp0.."
if not exist "%root%\.venv\Scripts\python.exe" goto installed
if not exist "%root%\codebase_rag\cli.py" goto installed
set "PYTHONPATH=%root%;%PYTHONPATH%"
"%root%\.venv\Scripts\python.exe" -m codebase_rag %*
exit /b %ERRORLEVEL%
:installed
where codebase-rag >nul 2>nul || goto missing
codebase-rag %*
exit /b %ERRORLEVEL%
:missing
echo codebase-rag: no installation found: neither %root%\.venv (a checkout's, made by its README's first command) nor codebase-rag on PATH (pip install codebase-rag) 1>&2
exit /b 1
