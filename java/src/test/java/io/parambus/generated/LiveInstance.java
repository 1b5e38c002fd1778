package io.parambus.generated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A real pbusd serving one fresh instance of a compiled schema, for the tests
 * of the generated classes: started from the C build tree (system property
 * {@code pbus.build}), ready when it says {@code READY=1} on its
 * {@code --notify-fd} (no sleep), with its own state and socket folders, and
 * stopped by {@link #close()} (SIGTERM, then SIGKILL after 10 s), which also
 * stops the programs started through it and removes the folders. Also runs
 * the {@code pbus} tool against the instance. One thread at a time.
 */
final class LiveInstance implements AutoCloseable {
    private static final long TIMEOUT_S = 10;

    private final Path build;
    private final Path dir;
    private final String name;
    private final List<Process> processes = new ArrayList<>();

    private LiveInstance(Path build, Path dir, String name) {
        this.build = build;
        this.dir = dir;
        this.name = name;
    }

    /** The C build tree the tests were given (pbus.build), or a test failure saying so. */
    static Path build() {
        String b = System.getProperty("pbus.build", "");
        if (b.isEmpty()) {
            fail("system property pbus.build (the C build tree) is not set: run tests/java/run-maven");
        }
        return Path.of(b);
    }

    /**
     * Starts pbusd on {@code schema} (relative to the build tree) as a new
     * instance named after {@code tag} and this process.
     */
    static LiveInstance start(String schema, String tag) throws IOException {
        Path build = build();
        Path dir = Files.createTempDirectory("pbus-java-gen.",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        String name = "jgen-" + tag + "-" + ProcessHandle.current().pid();
        LiveInstance live = new LiveInstance(build, dir, name);
        try {
            live.startPbusd(build.resolve(schema));
        } catch (IOException | RuntimeException | Error e) {
            live.close();
            throw e;
        }
        return live;
    }

    private void startPbusd(Path schema) throws IOException {
        Files.createDirectories(dir.resolve("state"));
        Files.createDirectories(dir.resolve("sock"));
        // pbusd writes READY=1 on descriptor 3 and closes it: a pipe here.
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", "exec \"$0\" \"$@\" 3>&1 >/dev/null",
                build.resolve("daemon/pbusd").toString(), "--schema", schema.toString(),
                "--instance", name, "--state-dir", dir.resolve("state").toString(),
                "--socket-dir", dir.resolve("sock").toString(), "--save-delay", "0",
                "--log-level", "error", "--notify-fd", "3");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        processes.add(p);
        String ready = firstLine(p.getInputStream());
        if (!"READY=1".equals(ready)) {
            fail("pbusd " + name + " did not become ready (said " + ready + ")");
        }
    }

    private static String firstLine(InputStream in) {
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                return all.lines().findFirst().orElse("");
            } catch (IOException e) {
                return "read error: " + e;
            }
        });
        try {
            return line.get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return "nothing within " + TIMEOUT_S + " s";
        } catch (InterruptedException | ExecutionException e) {
            return "nothing: " + e;
        }
    }

    /** The instance name. */
    String name() {
        return name;
    }

    /** Starts a program of the build tree with the instance's socket folder in its environment. */
    Process startProgram(String program, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(build.resolve(program).toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("PBUS_SOCKET_DIR", dir.resolve("sock").toString());
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        processes.add(0, p);
        return p;
    }

    /** Result of one run of {@code pbus}. */
    record Run(int status, String out, String err) {
    }

    /** Runs {@code pbus -i NAME args...} to its end (at most 30 s). */
    Run pbus(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(build.resolve("tools/pbus").toString(), "-i", name));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("PBUS_SOCKET_DIR", dir.resolve("sock").toString());
        Path out = Files.createTempFile(dir, "pbus", ".out");
        Path err = Files.createTempFile(dir, "pbus", ".err");
        pb.redirectOutput(out.toFile());
        pb.redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("pbus " + String.join(" ", args) + " did not end within 30 s");
        }
        return new Run(p.exitValue(), Files.readString(out).strip(), Files.readString(err).strip());
    }

    /** {@code pbus get NAME}: its one line, or a test failure. */
    String get(String param) throws IOException, InterruptedException {
        Run r = pbus("get", param);
        assertEquals(0, r.status(), () -> "pbus get " + param + ": " + r.err());
        return r.out();
    }

    /** {@code pbus set A=x B=y ...} through pbusd's socket, or a test failure. */
    void set(String... assignments) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("set"));
        args.addAll(List.of(assignments));
        Run r = pbus(args.toArray(String[]::new));
        assertEquals(0, r.status(), () -> "pbus set " + String.join(" ", assignments) + ": " + r.err());
    }

    /** Stops every process started here (programs first, pbusd last) and removes the folders. */
    @Override
    public void close() {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(TIMEOUT_S, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // a folder left in /tmp is no test failure
        }
    }
}
