//! A crate-level doc: not any item's.
#![allow(dead_code)]

use std::fmt;

/// A point; `fn fake() {}` in a doc comment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// A unit struct.
struct Marker;

pub enum Shape {
    Circle { r: f64 },
    Square(f64),
}

pub type Result<T> = std::result::Result<T, String>;

union Bits {
    i: u32,
    f: f32,
}

impl Point {
    /// Makes a point.
    pub const fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }

    pub fn dist(&self, other: &Point) -> f64 {
        let s = "fn inside_a_string() { }";
        let f = |a: i32| -> i32 { a * 2 };
        fn helper(v: i32) -> i32 {
            v + 1
        }
        let _ = (s, f(1), helper(2));
        (((self.x - other.x).pow(2) + (self.y - other.y).pow(2)) as f64).sqrt()
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl<'a, T> From<&'a [T]> for Shape
where
    T: Copy + Into<f64>,
{
    fn from(xs: &'a [T]) -> Self {
        Shape::Square(xs[0].into())
    }
}

impl Copy for Marker {}
impl Clone for Marker {
    fn clone(&self) -> Self {
        *self
    }
}

pub trait Area {
    fn area(&self) -> f64;

    /// A default method.
    fn double(&self) -> f64 {
        self.area() * 2.0
    }
}

/// Only a signature: one chunk.
trait Named {
    fn name(&self) -> String;
}

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

pub mod geometry {
    pub fn origin() -> super::Point {
        super::Point::new(0, 0)
    }

    pub mod deep {
        #[inline]
        pub(crate) async fn far() -> u8 {
            r#"}"#.len() as u8
        }
    }
}

mod only_types {
    pub struct A;
}

extern "C" {
    fn abs(x: i32) -> i32;
}

static GLOBAL: &str = "}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_works() {
        assert_eq!(square!(2), 4);
    }
}

pub fn r#match(a: u8) -> u8 {
    match a {
        0 => 1,
        _ => 0,
    }
}
