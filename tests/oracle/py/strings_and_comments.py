"""Strings and comments that look like code: def and class inside literals and comments.

def not_a_function():
    pass
"""
import re

# class NotAClass:
#     def not_a_method(self): ...

TEMPLATE = """
def generated(x):
    return x

class Generated:
    pass
"""

PATTERN = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")   # def in a regex
QUOTES = ('"""', "'''", "\"", '\'', "#", "def", 'class')


def after_template():
    '''A docstring holding """ quotes """ and def lines:
    def fake(): pass
    class Fake: pass
    '''
    return TEMPLATE.replace("def", "async def")


def f_strings(name, width=10):
    first = f"def {name}():"
    nested = f"{'class'!r:>{width}} {name + '(' + ')'}"
    braces = f"{{def}} {{{name}}}"
    multi = f"""
class {name}:
    def m(self): {'pass'}
"""
    return first, nested, braces, multi


class Holder:
    """class Holder: def inside the doc."""
    SQL = "SELECT def FROM class WHERE x = '#'"  # a comment after a string with '#'

    def method(self):  # def another(self): in a comment
        s = 'it''s'  # adjacent literals
        b = b"def bytes():" rb"\d"
        return s, b

    # def commented_out(self):
    #     return 1

    def escaped(self):
        return "a \" def b(): \\" + 'c \' class D: \\'


def continued_string():
    x = "one \
def two(): \
three"
    return x


def last():
    return "#" + '#'  # end
