from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, overload


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Pair(NamedTuple):
    left: int
    right: int


class ParseError(ValueError):
    pass


class Reader(Protocol):
    def read(self, n: int = -1) -> bytes: ...

    async def aread(self) -> bytes: ...


@overload
def parse(value: int) -> int: ...
@overload
def parse(value: str) -> str: ...
def parse(value):
    return value


async def fetch_all(urls, limit: int | None = None):
    async with asyncio.timeout(10):
        results = [u async for u in stream(urls)]
    async for item in stream(urls):
        results.append(item)
    await asyncio.sleep(0)
    return results


async def stream(items):
    for item in items:
        yield item


def matcher(command):
    match command.split():
        case ["go", direction]:
            return direction
        case ["quit" | "exit"]:
            return None
        case {"x": x, **rest} if x > 0:
            return rest
        case Point(x=0, y=y):
            return y
        case _:
            return command


def soft_keywords(match, case, type, _):
    return match, case, type, _


def match(): return "a function named match"


def walrus(data):
    if (n := len(data)) > 10:
        return n
    return [y for x in data if (y := x * 2)]


def defaults_with_lambdas(
    key=lambda x: x,
    cmp=lambda a, b: (a > b) - (a < b),
    build=lambda: {"def": lambda: None},
):
    return key, cmp, build


class Service:
    timeout: float = 1.0
    handler = staticmethod(lambda request: request)

    def __init__(self, *, name: str) -> None:
        self.name = name

    @classmethod
    def create(cls, **kw) -> "Service":
        return cls(**kw)

    @staticmethod
    def helper() -> None:
        return None

    @property
    def label(self) -> str:
        return self.name

    def __repr__(self):
        return f"Service({self.name!r})"

    async def run(self):
        try:
            await asyncio.sleep(0)
        except* ValueError as group:
            raise group
        finally:
            pass


lookup = {name: lambda: name for name in ("a", "b")}
