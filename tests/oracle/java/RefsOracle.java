// Call edges by javac's attribution (issue 47): every method call and construction of the
// files named on stdin (relative to --root), compiled together, and the member javac binds
// it to. JSON Lines: file, line, col, name, kind, decl {file, line, name, kind} (decl null
// where javac bound nothing; file null for a library's member). Missing libraries are
// errors javac reports and survives: the rest is still attributed.
//   java --add-exports jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED \
//        tests/oracle/java/RefsOracle.java --root TREE < files
import com.sun.source.tree.*;
import com.sun.source.util.*;
import com.sun.tools.javac.tree.JCTree;
import javax.lang.model.element.*;
import javax.tools.*;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class RefsOracle {
    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args[1]).toAbsolutePath().normalize();
        List<File> files = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; )
            if (!line.isBlank() && !line.endsWith("module-info.java")) files.add(root.resolve(line.trim()).toFile());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8);
        DiagnosticListener<JavaFileObject> quiet = d -> { };
        JavacTask task = (JavacTask) javac.getTask(null, fm, quiet,
            List.of("-proc:none", "-implicit:none", "-Xmaxerrs", "0", "-encoding", "UTF-8"),
            null, fm.getJavaFileObjectsFromFiles(files));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        TREES = trees;
        ROOT = root;
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        for (CompilationUnitTree cu : units) {
            String rel = root.relativize(Paths.get(cu.getSourceFile().toUri())).toString().replace('\\', '/');
            LineMap lines = cu.getLineMap();
            new TreePathScanner<Void, Void>() {
                void emit(Tree tree, long pos, String name, String kind) {
                    if (pos < 0) return;
                    Element e = trees.getElement(getCurrentPath());
                    StringBuilder b = new StringBuilder();
                    b.append("{\"file\":").append(q(rel)).append(",\"line\":").append(lines.getLineNumber(pos))
                     .append(",\"col\":").append(lines.getColumnNumber(pos) - 1)
                     .append(",\"name\":").append(q(name)).append(",\"kind\":").append(q(kind))
                     .append(",\"decl\":").append(decl(e, kind.equals("new"))).append("}");
                    out.println(b);
                }
                @Override public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
                    ExpressionTree sel = t.getMethodSelect();
                    Element e = trees.getElement(getCurrentPath());
                    String name; long pos;
                    if (sel instanceof MemberSelectTree) {
                        name = ((MemberSelectTree) sel).getIdentifier().toString();
                        long end = trees.getSourcePositions().getEndPosition(cu, sel);
                        pos = end - name.length();
                    } else {
                        name = ((IdentifierTree) sel).getName().toString();
                        pos = trees.getSourcePositions().getStartPosition(cu, sel);
                    }
                    if ((name.equals("super") || name.equals("this"))) {
                        // the super() javac adds to a constructor is no call of the source
                        if (trees.getSourcePositions().getEndPosition(cu, t) < 0) return super.visitMethodInvocation(t, v);
                        if (e == null || e.getEnclosingElement() == null) { super.visitMethodInvocation(t, v); return null; }
                        name = e.getEnclosingElement().getSimpleName().toString();
                    }
                    emit(t, pos, name, "call");
                    return super.visitMethodInvocation(t, v);
                }
                @Override public Void visitNewClass(NewClassTree t, Void v) {
                    Tree id = t.getIdentifier();
                    if (id instanceof ParameterizedTypeTree) id = ((ParameterizedTypeTree) id).getType();
                    if (id instanceof AnnotatedTypeTree) id = ((AnnotatedTypeTree) id).getUnderlyingType();
                    String name; long pos;
                    if (id instanceof MemberSelectTree) {
                        name = ((MemberSelectTree) id).getIdentifier().toString();
                        pos = trees.getSourcePositions().getEndPosition(cu, id) - name.length();
                    } else if (id instanceof IdentifierTree) {
                        name = ((IdentifierTree) id).getName().toString();
                        pos = trees.getSourcePositions().getStartPosition(cu, id);
                    } else return super.visitNewClass(t, v);
                    emit(t, pos, name, "new");
                    return super.visitNewClass(t, v);
                }
            }.scan(cu, null);
        }
        out.flush();
    }

    // where javac's element is declared: a method or constructor of the compiled sources
    // (at its name's line); for a construction, or a constructor javac made, the class
    // constructed (at its name's line), as the other languages' oracles count it
    static String decl(Element e, boolean made) {
        if (e == null || e.asType() == null || e.asType().getKind() == javax.lang.model.type.TypeKind.ERROR) return "null";
        if (!(e instanceof ExecutableElement)) return "null";
        String kind = e.getKind() == ElementKind.CONSTRUCTOR ? "constructor" : "method";
        Element at = e;
        if (kind.equals("constructor") && (made || (((com.sun.tools.javac.code.Symbol) e).flags() & com.sun.tools.javac.code.Flags.GENERATEDCONSTR) != 0)) {
            at = e.getEnclosingElement();
            kind = "class";
            // new T() { ... }: an anonymous class's constructor is its base's, T's
            if (at instanceof TypeElement && ((TypeElement) at).getNestingKind() == NestingKind.ANONYMOUS) {
                TypeElement anon = (TypeElement) at;
                javax.lang.model.type.TypeMirror base = anon.getInterfaces().isEmpty() ? anon.getSuperclass() : anon.getInterfaces().get(0);
                at = base instanceof javax.lang.model.type.DeclaredType ? ((javax.lang.model.type.DeclaredType) base).asElement() : null;
                if (at == null) return "null";
            }
        }
        TreePath path = TREES.getPath(at);
        if (path == null)
            return "{\"file\":null,\"line\":0,\"name\":" + q(e.getSimpleName().toString()) + ",\"kind\":" + q(kind) + "}";
        CompilationUnitTree cu = path.getCompilationUnit();
        JCTree tree = (JCTree) path.getLeaf();
        long pos = tree.pos;
        String file = ROOT.relativize(Paths.get(cu.getSourceFile().toUri())).toString().replace('\\', '/');
        String name = kind.equals("constructor") ? e.getEnclosingElement().getSimpleName().toString() : at.getSimpleName().toString();
        return "{\"file\":" + q(file) + ",\"line\":" + cu.getLineMap().getLineNumber(pos) + ",\"name\":" + q(name) + ",\"kind\":" + q(kind) + "}";
    }

    static Trees TREES;
    static Path ROOT;

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
