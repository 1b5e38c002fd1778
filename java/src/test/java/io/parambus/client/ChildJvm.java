package io.parambus.client;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A JVM of its own running {@link ChildMain} on the class path (the main and test classes
 * of this build), optionally as another user through setpriv; killed if it takes longer
 * than a minute.
 */
final class ChildJvm {
    private ChildJvm() {
    }

    /** What the child printed and its exit status. */
    record Result(int exit, String output) {
        /** The value of the first line {@code key value}, or null. */
        String value(String key) {
            for (String line : output.split("\n")) {
                if (line.startsWith(key + " ")) {
                    return line.substring(key.length() + 1).trim();
                }
            }
            return null;
        }
    }

    private static String location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs {@code ChildMain args} as {@code uidGid} (null: as we are), with more JVM options. */
    static Result run(String uidGid, List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (uidGid != null) {
            String[] ug = uidGid.split(":");
            cmd.addAll(List.of("setpriv", "--reuid=" + ug[0], "--regid=" + ug[1], "--clear-groups", "--"));
        }
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of("-XX:-UsePerfData", "-Xshare:auto", "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(jvmOptions);
        String classPath = location(PbusClient.class) + ":" + location(ChildMain.class);
        Path staged = null;
        if (uidGid != null) {
            // The other user may not reach the checkout (a clone in a private folder, as
            // CI's): it runs copies of the classes, in a folder it can read.
            staged = Files.createTempDirectory("pbus-java-child-");
            Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rwxr-xr-x"));
            classPath = copyTree(Path.of(location(PbusClient.class)), staged.resolve("main")) + ":"
                    + copyTree(Path.of(location(ChildMain.class)), staged.resolve("test"));
        }
        cmd.addAll(List.of("-cp", classPath, ChildMain.class.getName()));
        cmd.addAll(List.of(args));
        try {
            return runCommand(cmd, args);
        } finally {
            if (staged != null) {
                try (Stream<Path> files = Files.walk(staged)) {
                    for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(f);
                    }
                }
            }
        }
    }

    /** A world-readable copy of the folder {@code from} at {@code to}; {@code to}. */
    private static Path copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
                } else {
                    Files.copy(f, target);
                    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r--r--"));
                }
            }
        }
        return to;
    }

    private static Result runCommand(List<String> cmd, String... args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(
                Path.of("/dev/null").toFile())).start();
        InputStream in = p.getInputStream();
        CompletableFuture<String> output = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                output.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                output.completeExceptionally(e);
            }
        });
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            String partial = output.getNow("(no output)");
            fail("the child JVM (" + String.join(" ", args) + ") did not end within 60 s: " + partial);
        }
        try {
            return new Result(p.exitValue(), output.get(10, TimeUnit.SECONDS));
        } catch (Exception e) {
            throw new IOException("the child's output: " + e, e);
        }
    }
}
