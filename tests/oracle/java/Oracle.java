// The Java oracle: javac's own parser (the com.sun.source.tree API) names the chunks a Java
// file must give. Run as `java Oracle.java`; reads file paths, one a line, on stdin; writes
// one JSON object a line: {"file": path, "units": [...]} or {"file": path, "error": "..."}.
// A unit: kind, name, chain (the types around it), top (its first line, annotations
// included), sig (its name's line), end (its last line), body (its body's first line; 0 for
// a type), doc (its Javadoc's text up to the first block tag).
// Units: every method and constructor with a body and every initializer block of a class,
// interface, enum, record or enum constant body; and every type with none of these anywhere
// inside it (and not inside such a type), whole. Nothing inside a body is a unit.
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import javax.tools.*;

public class Oracle {
    static final Map<Tree.Kind, String> KINDS = Map.of(
        Tree.Kind.CLASS, "class", Tree.Kind.INTERFACE, "interface", Tree.Kind.ENUM, "enum",
        Tree.Kind.RECORD, "record", Tree.Kind.ANNOTATION_TYPE, "annotation");

    CompilationUnitTree cu;
    SourcePositions pos;
    DocTrees trees;
    String src;
    List<String> units = new ArrayList<>();
    int functions = 0;

    int line(long p) { return (int) cu.getLineMap().getLineNumber(p); }

    /** The line of name's first occurrence as a word at or after from. */
    int nameLine(String name, long from) {
        int i = (int) from;
        while ((i = src.indexOf(name, i)) >= 0) {
            boolean before = i == 0 || !Character.isJavaIdentifierPart(src.charAt(i - 1));
            int j = i + name.length();
            boolean after = j >= src.length() || !Character.isJavaIdentifierPart(src.charAt(j));
            if (before && after) return line(i);
            i = j;
        }
        return line(from);
    }

    String wordAt(long p) {
        int i = (int) p, j = i;
        while (j < src.length() && Character.isJavaIdentifierPart(src.charAt(j))) j++;
        return src.substring(i, j);
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    String doc(TreePath path) {
        String d = trees.getDocComment(path);
        if (d == null) return "";
        StringBuilder kept = new StringBuilder();
        for (String l : d.split("\n")) {
            if (l.strip().startsWith("@")) break;
            kept.append(l).append(' ');
        }
        String t = kept.toString().replaceAll("\\{@\\w+\\s+([^}|\\s]+)(?:[|\\s]+([^}]*))?\\}", "$1");
        return String.join(" ", t.strip().split("\\s+")).strip();
    }

    void unit(String kind, String name, String chain, Tree tree, long nameFrom, Tree body,
              TreePath path) {
        long start = pos.getStartPosition(cu, tree), end = pos.getEndPosition(cu, tree);
        units.add("{\"kind\":" + json(kind) + ",\"name\":" + json(name) + ",\"chain\":" +
                  json(chain) + ",\"top\":" + line(start) + ",\"sig\":" + nameLine(name, nameFrom) +
                  ",\"end\":" + line(end - 1) + ",\"body\":" +
                  (body == null ? 0 : line(pos.getStartPosition(cu, body))) + ",\"doc\":" +
                  json(doc(path)) + "}");
    }

    /** A type body: its members' units; the type itself when no function is inside. */
    void container(String kind, String name, String chain, Tree tree, List<? extends Tree> members,
                   TreePath path, long nameFrom) {
        String inner = chain.isEmpty() ? name : chain + "." + name;
        int mark = units.size(), before = functions;
        for (Tree m : members) {
            TreePath p = new TreePath(path, m);
            if (m instanceof MethodTree) {
                MethodTree mt = (MethodTree) m;
                if (mt.getBody() == null) continue;
                functions++;
                boolean ctor = mt.getName().contentEquals("<init>");
                Tree after = mt.getReturnType() != null ? mt.getReturnType() : mt.getModifiers();
                long from = Math.max(pos.getEndPosition(cu, after), pos.getStartPosition(cu, m));
                if (!mt.getTypeParameters().isEmpty())
                    from = Math.max(from, pos.getEndPosition(cu, mt.getTypeParameters()
                        .get(mt.getTypeParameters().size() - 1)));
                unit(ctor ? "constructor" : "method", ctor ? name : mt.getName().toString(),
                     inner, m, from, mt.getBody(), p);
            } else if (m instanceof BlockTree) {
                functions++;
                BlockTree b = (BlockTree) m;
                String n = b.isStatic() ? "<static initializer>" : "<initializer>";
                units.add("{\"kind\":\"initializer\",\"name\":" + json(n) + ",\"chain\":" +
                          json(inner) + ",\"top\":" + line(pos.getStartPosition(cu, m)) +
                          ",\"sig\":" + line(pos.getStartPosition(cu, m)) + ",\"end\":" +
                          line(pos.getEndPosition(cu, m) - 1) + ",\"body\":" +
                          line(pos.getStartPosition(cu, m)) + ",\"doc\":" + json(doc(p)) + "}");
            } else if (m instanceof ClassTree) {
                klass((ClassTree) m, inner, p);
            } else if (m instanceof VariableTree) {
                VariableTree v = (VariableTree) m;
                if (v.getInitializer() instanceof NewClassTree &&
                        ((NewClassTree) v.getInitializer()).getClassBody() != null &&
                        wordAt(pos.getStartPosition(cu, v)).equals(v.getName().toString())) {
                    // an enum constant with a body: it starts with its own name
                    ClassTree body = ((NewClassTree) v.getInitializer()).getClassBody();
                    container("enum constant", v.getName().toString(), inner, m,
                              body.getMembers(), new TreePath(p, body),
                              pos.getStartPosition(cu, m));
                }
            }
        }
        if (functions == before) {
            units.subList(mark, units.size()).clear();
            unit(kind, name, chain, tree, nameFrom, null, path);
        }
    }

    void klass(ClassTree c, String chain, TreePath path) {
        String name = c.getSimpleName().toString();
        long from = Math.max(pos.getEndPosition(cu, c.getModifiers()), pos.getStartPosition(cu, c));
        container(KINDS.getOrDefault(c.getKind(), "class"), name, chain, c, c.getMembers(), path,
                  from);
    }

    public static void main(String[] args) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String path;
        while ((path = in.readLine()) != null) {
            String text;
            try {
                byte[] raw = Files.readAllBytes(Paths.get(path));
                text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPLACE)
                    .decode(java.nio.ByteBuffer.wrap(raw)).toString();
            } catch (IOException e) {
                out.println("{\"file\":" + json(path) + ",\"error\":" + json(e.toString()) + "}");
                continue;
            }
            if (text.startsWith("\uFEFF")) text = " " + text.substring(1);
            final String code = text;
            JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///" +
                    Paths.get(path).getFileName()), JavaFileObject.Kind.SOURCE) {
                public CharSequence getCharContent(boolean ignore) { return code; }
            };
            DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
            JavacTask task = (JavacTask) javac.getTask(null, null, diags,
                List.of("-proc:none", "--enable-preview", "--release",
                        String.valueOf(Runtime.version().feature())), null, List.of(file));
            Oracle o = new Oracle();
            o.trees = DocTrees.instance(task);
            o.pos = o.trees.getSourcePositions();
            o.src = code;
            try {
                for (CompilationUnitTree cu : task.parse()) {
                    o.cu = cu;
                    for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics())
                        if (d.getKind() == Diagnostic.Kind.ERROR)
                            throw new IllegalStateException("line " + d.getLineNumber() + ": " +
                                d.getMessage(null).split("\n")[0]);
                    for (Tree t : cu.getTypeDecls())
                        if (t instanceof ClassTree)
                            o.klass((ClassTree) t, "", new TreePath(new TreePath(cu), t));
                }
                out.println("{\"file\":" + json(path) + ",\"units\":[" + String.join(",", o.units) + "]}");
            } catch (Exception e) {
                out.println("{\"file\":" + json(path) + ",\"error\":" + json(String.valueOf(e.getMessage())) + "}");
            }
        }
    }
}
