package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A real pbusd for the tests: the C build tree's {@code daemon/pbusd} (the system property
 * {@code pbus.build}, set by tests/java/run-maven), serving a compiled schema under an
 * instance name unique to the run, with its own state and socket folders. Started ready
 * (pbusd writes READY=1 to {@code --notify-fd 1}, our pipe), stopped for sure by
 * {@link #close()} (SIGTERM, then SIGKILL), with timeouts everywhere.
 */
final class Pbusd implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    final String instance;
    final Path dir;
    final Path stateDir;
    final Path socketDir;
    final Path log;
    private final List<String> extra;
    private Path schema;
    private final Path binary; // pbusd, or a copy the other user can reach
    private final String user; // run as this uid:gid (setpriv), or null for ours
    private Process process;

    private Pbusd(Path schema, String user, String... extra) throws IOException {
        this.instance = "jt-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
        this.schema = schema;
        this.user = user;
        this.extra = List.of(extra);
        this.dir = Files.createTempDirectory("pbus-java-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        this.stateDir = Files.createDirectory(dir.resolve("state"));
        this.socketDir = Files.createDirectory(dir.resolve("sock"));
        this.log = dir.resolve("pbusd.log");
        if (user != null) {
            Files.writeString(log, "");
            int uid = Integer.parseInt(user.split(":")[0]);
            for (Path p : List.of(stateDir, socketDir, log)) {
                Files.setAttribute(p, "unix:uid", uid);
            }
            // The other user may not reach the checkout (a clone in a private folder, as
            // CI's): it runs a copy of pbusd and reads a copy of the schema, both here.
            this.schema = Files.copy(schema, dir.resolve("schema.pbs"));
            this.binary = Files.copy(build().resolve("daemon/pbusd"), dir.resolve("pbusd"));
            Files.setPosixFilePermissions(this.schema, PosixFilePermissions.fromString("rw-r--r--"));
            Files.setPosixFilePermissions(this.binary, PosixFilePermissions.fromString("rwxr-xr-x"));
        } else {
            this.binary = build().resolve("daemon/pbusd");
        }
    }

    /** A pbusd of {@code schema} with more options, started and ready. */
    static Pbusd start(Path schema, String... extra) throws IOException {
        Pbusd d = new Pbusd(schema, null, extra);
        d.start();
        return d;
    }

    /** A pbusd run as {@code uid:gid} (setpriv, no supplementary groups), started and ready. */
    static Pbusd startAs(String uidGid, Path schema, String... extra) throws IOException {
        Pbusd d = new Pbusd(schema, uidGid, extra);
        d.start();
        return d;
    }

    static Path build() {
        String b = System.getProperty("pbus.build");
        assertTrue(b != null && !b.isEmpty(), "the system property pbus.build (the C build tree) is not set: "
                + "run the tests with tests/java/run-maven BUILD_DIR");
        Path p = Path.of(b);
        assertTrue(Files.isExecutable(p.resolve("daemon/pbusd")), "no " + p.resolve("daemon/pbusd"));
        return p;
    }

    /** The repository's top folder (the tests run in java/). */
    static Path repo() {
        Path top = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
        assertTrue(Files.isDirectory(top.resolve("tests/server/fixtures")), "no tests/server/fixtures under " + top);
        return top;
    }

    /** A file of the repository, e.g. {@code tests/server/fixtures/server.pbs}. */
    static Path fixture(String relative) {
        return repo().resolve(relative);
    }

    /** Serve another schema at the next {@link #start()} (same instance, folders and state). */
    void useSchema(Path other) {
        schema = other;
    }

    /** Starts pbusd and waits for its READY. */
    void start() throws IOException {
        List<String> cmd = new ArrayList<>();
        if (user != null) {
            String[] ug = user.split(":");
            cmd.addAll(List.of("setpriv", "--reuid=" + ug[0], "--regid=" + ug[1], "--clear-groups", "--"));
        }
        cmd.addAll(List.of(binary.toString(), "--schema", schema.toString(), "--instance", instance,
                "--state-dir", stateDir.toString(), "--socket-dir", socketDir.toString(), "--notify-fd", "1",
                "--no-hardware"));
        cmd.addAll(extra);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        process = pb.start();
        InputStream ready = process.getInputStream();
        CompletableFuture<byte[]> line = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                line.complete(ready.readNBytes(8));
            } catch (IOException e) {
                line.completeExceptionally(e);
            }
        });
        byte[] got;
        try {
            got = line.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new AssertionError("pbusd not ready within " + WAIT + ": " + e + "; log: " + log(), e);
        }
        if (!new String(got, StandardCharsets.US_ASCII).equals("READY=1\n")) {
            kill();
            fail("pbusd wrote '" + new String(got, StandardCharsets.US_ASCII) + "' instead of READY=1; log: " + log());
        }
    }

    /** pbusd's pid. */
    long pid() {
        return process.pid();
    }

    /** The socket's path. */
    Path socket() {
        return socketDir.resolve(instance + ".sock");
    }

    /** SIGTERM (a clean shutdown), then SIGKILL if it lingers. */
    void stop() {
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** SIGKILL: pbusd dies as in a crash. */
    void kill() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Options for a client of this pbusd: its socket folder, a short reconnect delay. */
    ClientOptions options() {
        return ClientOptions.defaults().withSocketDir(socketDir).withName("junit")
                .withReconnectDelay(Duration.ofMillis(50), Duration.ofMillis(400));
    }

    /** A client of this pbusd. */
    PbusClient client() {
        return PbusClient.connect(instance, options());
    }

    /** The end of pbusd's log. */
    String log() {
        try {
            String s = Files.readString(log);
            return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws IOException {
        stop();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
        try (Stream<Path> shm = Files.list(Path.of("/dev/shm"))) {
            for (Path p : shm.filter(p -> p.getFileName().toString().startsWith("pbus." + instance)).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
