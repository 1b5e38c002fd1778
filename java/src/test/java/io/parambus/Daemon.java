package io.parambus;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A real pbusd (the C build's daemon/pbusd) serving a schema for a test, in a private
 * temporary directory (state and socket), started with {@code --notify-fd 1} so that the
 * test waits for its "READY=1" line, never for a time; and the C command line
 * ({@code pbus}) run against it. Every process is stopped when the test ends, with
 * timeouts, also on failure.
 */
final class Daemon implements AutoCloseable {
    static final long TIMEOUT_S = 20;
    private static final AtomicInteger SERIAL = new AtomicInteger();

    final String instance;
    final Path dir;
    final Path socketDir;
    private final String schema;
    private Process process;

    private Daemon(String schema, String instance) throws IOException {
        this.schema = schema;
        this.instance = instance;
        this.dir = Files.createTempDirectory("pbus-java-");
        this.socketDir = Files.createDirectory(dir.resolve("sockets"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.createDirectory(dir.resolve("state"));
    }

    /** The test fixture of tests/cli (every type, limits, an enum, read-only parameters). */
    static String cliSchema() {
        return Path.of(TestSupport.sourceTree(), "tests", "cli", "fixtures", "test.pbs").toString();
    }

    /** The cross-language fixture (tests/java/fixtures/xlang.pbs). */
    static String crossSchema() {
        return Path.of(TestSupport.sourceTree(), "tests", "java", "fixtures", "xlang.pbs").toString();
    }

    /** A new instance name for this JVM. */
    static String newInstance() {
        return "jtest-" + ProcessHandle.current().pid() + "-" + SERIAL.incrementAndGet();
    }

    /** Start a pbusd serving {@code schema} as a new instance, and wait until it is ready. */
    static Daemon start(String schema) {
        try {
            Daemon d = new Daemon(schema, newInstance());
            try {
                d.startProcess();
            } catch (RuntimeException | Error e) {
                d.close();
                throw e;
            }
            return d;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Start pbusd again (after {@link #stop()} or {@link #kill()}), same instance. */
    void restart() {
        startProcess();
    }

    private void startProcess() {
        ProcessBuilder pb = new ProcessBuilder(TestSupport.program("daemon/pbusd").toString(), "--schema", schema,
                "--instance", instance, "--state-dir", dir.resolve("state").toString(), "--socket-dir",
                socketDir.toString(), "--notify-fd", "1", "--no-hardware", "--log-level", "warning");
        pb.redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("pbusd.log").toFile()));
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Process p = process;
        CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line = r.readLine();
                return line == null ? "" : line;
            } catch (IOException e) {
                return "read failed: " + e;
            }
        });
        String line;
        try {
            line = ready.get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            line = "no line within " + TIMEOUT_S + " s";
        }
        if (!line.equals("READY=1")) {
            p.destroyForcibly();
            throw new IllegalStateException("pbusd did not start (" + line + "): " + log());
        }
    }

    /** pbusd's process id. */
    long pid() {
        return process.pid();
    }

    /** Whether pbusd runs. */
    boolean alive() {
        return process != null && process.isAlive();
    }

    /** pbusd's log (its stderr). */
    String log() {
        try {
            Path f = dir.resolve("pbusd.log");
            return Files.exists(f) ? Files.readString(f).strip() : "";
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** A clean shutdown (SIGTERM): the segment becomes closed. */
    void stop() {
        if (process == null || !process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(TIMEOUT_S, TimeUnit.SECONDS);
                throw new IllegalStateException("pbusd did not stop on SIGTERM within " + TIMEOUT_S + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGKILL: the segment stays named and live, its owner dead (orphaned). */
    void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The result of a command: exit status, stdout, stderr. */
    record Result(int status, String out, String err) {
    }

    /** Run a program (with this instance's socket directory in its environment), with a timeout. */
    Result run(List<String> argv) {
        ProcessBuilder pb = new ProcessBuilder(argv);
        Map<String, String> env = pb.environment();
        env.put("PBUS_SOCKET_DIR", socketDir.toString());
        env.put("PBUS_INSTANCE", instance);
        return Daemon.runProcess(pb);
    }

    /** Run {@code pbus ARGS...} against this instance. */
    Result pbus(String... args) {
        List<String> argv = new ArrayList<>();
        argv.add(TestSupport.program("tools/pbus").toString());
        argv.add("-i");
        argv.add(instance);
        argv.addAll(List.of(args));
        return run(argv);
    }

    /** Run a process to its end (at most TIMEOUT_S), collecting its output. */
    static Result runProcess(ProcessBuilder pb) {
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        try {
            if (!p.waitFor(TIMEOUT_S * 3, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(pb.command() + " did not end within " + TIMEOUT_S * 3 + " s");
            }
            return new Result(p.exitValue(), out.get(TIMEOUT_S, TimeUnit.SECONDS),
                    err.get(TIMEOUT_S, TimeUnit.SECONDS));
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IllegalStateException(pb.command() + ": " + e, e);
        }
    }

    private static String readAll(java.io.InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        try {
            stop();
        } finally {
            kill();
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                // Best effort: a temporary directory.
            }
            // A killed pbusd leaves its segment and lock file (docs/segment-format.md §6).
            try {
                Files.deleteIfExists(Path.of("/dev/shm/pbus." + instance));
                Files.deleteIfExists(Path.of("/dev/shm/pbus." + instance + ".lock"));
            } catch (IOException e) {
                // Best effort.
            }
        }
    }
}
