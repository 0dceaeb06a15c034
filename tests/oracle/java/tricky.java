package tricky;

import java.util.function.Function;

/**
 * A class with every kind of member. The word class in a comment: class Fake { void f() {} }
 *
 * @param <T> the type
 */
@SuppressWarnings({"unchecked", "rawtypes"})
public abstract class Tricky<T extends Comparable<T>> implements Runnable {
    static final String TEXT = "class Fake { void fake() { } }";
    static final String BLOCK = """
        void notAMethod() {
        }
        """;
    private final char brace = '{';

    static {
        System.setProperty("x", "}");
    }

    {
        count = 0;
    }

    int count;

    /** Makes one. */
    public Tricky() {
        this(0);
    }

    Tricky(int start) {
        count = start;
    }

    /**
     * Runs it; a lambda and an anonymous class stay inside.
     */
    @Override
    public void run() {
        Runnable r = new Runnable() {
            @Override
            public void run() {
                count++;
            }
        };
        Function<Integer, Integer> f = x -> {
            class Local {
                int twice() { return x * 2; }
            }
            return new Local().twice();
        };
        r.run();
    }

    public abstract int size();

    public <R> R map(Function<? super T, ? extends R> fn,
                     T value) throws IllegalStateException {
        return fn.apply(value);
    }

    @Deprecated
    // a line comment between the annotation and the method
    protected synchronized int[] array(int... xs) { return xs; }

    /** A nested enum with constant bodies. */
    enum Op {
        PLUS {
            @Override
            int apply(int a, int b) { return a + b; }
        },
        MINUS;

        int apply(int a, int b) { return a - b; }
    }

    interface Shape {
        double area();

        default String name() {
            return "shape";
        }

        static Shape unit() { return () -> 1.0; }
    }

    /** Only signatures: one chunk. */
    interface Listener {
        void on(String event);
    }

    record Point(int x, int y) {
        Point {
            if (x < 0) throw new IllegalArgumentException();
        }

        static Point origin() { return new Point(0, 0); }
    }

    record Pair(String a, String b) {}

    @interface Marker {
        String value() default "}";
    }

    static class Holder {
        static class Deep {
            int x;
        }
    }
}

class Second {
    void m() {}
}
