// Constructs that fool a regex: braces in strings, comments, chars and #if blocks.
// (Unbalanced braces across #if/#else are in test_chunker.py: tree-sitter cannot parse them.)
using System;
using System.Collections.Generic;
using unsafe IntPointer = int*;

namespace Tricky.Lexing;

/// <summary>Strings of every kind, with braces inside.</summary>
public class Strings
{
    private const string Open = "{ not a block";
    private readonly char brace = '{';
    private readonly char quote = '\'';

    public string Verbatim() => @"C:\path\{braces}"" still a string }";

    public string Interpolated(int n)
    {
        var nested = $"{(n > 0 ? $"{n:D3}" : "{none}")} and {{literal}}";
        return $@"{nested}\{{verbatim}}";
    }

    public string Raw()
    {
        var json = """
            { "key": "value with } and {" }
            """;
        var formatted = $$"""
            {"count": {{json.Length}}, "open": "{"}
            """;
        return json + formatted;
    }

    /* a block comment with a method inside: void Fake() { } */
    public int Count { get; } = 0;

    public int Checked
    {
        get { return brace == '}' ? 1 : 0; }   // } in a comment
        set
        {
#if DEBUG
            if (value < 0) { throw new ArgumentOutOfRangeException(nameof(value)); }
#elif TRACE
            Console.WriteLine("}");
#endif
        }
    }
}

/// <summary>Conditional attributes: the doc comment above the #if is the member's.</summary>
#if NET6_0_OR_GREATER
[Serializable]
#endif
public class Conditional
{
    /// <summary>Windows only on .NET 6.</summary>
#if NET6_0_OR_GREATER
    [Obsolete("windows")]
#else
    [Obsolete]
#endif
    public void Platform()
    {
        Console.WriteLine(@"hello,
#if Debug
        world
#else
        Nebraska
#endif
        ");
    }
}

public struct Vector
{
    public double X, Y;

    public Vector(double x, double y) { X = x; Y = y; }

    public static Vector operator +(Vector a, Vector b) => new Vector(a.X + b.X, a.Y + b.Y);

    public static implicit operator (double, double)(Vector v) => (v.X, v.Y);

    public double this[int i] => i == 0 ? X : Y;

    ~Vector() { }
}

public interface IShape
{
    double Area();

    string Describe() => $"shape of area {Area():F2}";
}

public record Circle(double Radius) : IShape
{
    public double Area() => Math.PI * Radius * Radius;

    public class Builder
    {
        private readonly List<Func<double, double>> steps = new();

        public Builder Scale(double factor)
        {
            steps.Add(r => r * factor);
            double Local(double r) { return r; }
            steps.Add(Local);
            return this;
        }

        public event EventHandler Built
        {
            add { }
            remove { }
        }
    }
}
