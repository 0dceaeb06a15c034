import functools
import os, \
    sys


@functools.lru_cache(
    maxsize=None,
    typed=False,
)
def decorated_over_lines(a):
    return a


@staticmethod
@functools.wraps(
    os.path.join)
def two_decorators(*args):
    return args


def multi_line_signature(
    first: int,
    second: "str" = "x",  # a comment in the parameters
    *rest,
    key=lambda item: (item, {"a": 1}),
    **options,
) -> dict[str, int]:
    return {}


def one_liner(): return 1
def another_one_liner(x): x += 1; return x


def continued(a, b, \
              c):
    total = a + \
        b + \
        c
    return total


class Outer(object):
    class_level = [
        1, 2,
    ]

    class Inner:
        def inner_method(self):
            return 1

        class Innermost:
            @property
            def deepest(self):
                return 2

            @deepest.setter
            def deepest(self, value):
                pass

    def outer_method(self):
        def nested_helper():
            def nested_again():
                return 3
            return nested_again()

        class LocalClass:
            def local_method(self):
                return 4

        return nested_helper, LocalClass

    def trailing_comments(self):
        return 5
        # a comment after the last statement

    # a class-level comment at the end


class Empty: pass


class OnlyDoc:
    """Nothing but a docstring."""


class WithNestedDataOnly:
    name = "x"

    class Meta:
        ordering = ["name"]


if sys.version_info >= (3, 8):
    def conditional():
        return "new"
else:
    def conditional():
        return "old"

try:
    from os import fspath
except ImportError:
    def fspath(path):
        return path


for _name in ("a", "b"):
    def _generated():
        return _name

while False:
    class InLoop:
        pass

with open(os.devnull) as _null:
    def in_with():
        return None


def	tabbed(x):
	if x:
		return 1
	return 2


if __name__ == "__main__":
    print(decorated_over_lines(1))
