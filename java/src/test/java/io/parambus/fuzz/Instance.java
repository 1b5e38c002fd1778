package io.parambus.fuzz;

import io.parambus.internal.Native;
import io.parambus.internal.Proc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A segment image installed as a live instance, as tests/vectors/README.md says an
 * owner makes one ("Installing an image"), for the fuzz targets, which install many
 * images in a row under one name: this JVM is the owner (its pid and start token as
 * {@code owner_pid}/{@code owner_start}), one System V wake segment serves every image
 * (created once, big enough for any {@code wake_size} §7 lets through, and marked for
 * removal at once so that nothing outlives the JVM), the file's size is written as
 * {@code segment_size}, and the instance name {@code vector} becomes the instance's.
 * {@link #close()} removes the file. One thread at a time.
 */
public final class Instance implements AutoCloseable {
    private static final long PID = ProcessHandle.current().pid();
    private static final int PARAM_MAX = 65535;

    /** The instance's name: {@code jfuzz-PID-SUFFIX}. */
    public final String name;
    private final Path path;
    private final int wakeId;

    /** An instance named after this JVM and {@code suffix}; nothing is installed yet. */
    public Instance(String suffix) {
        name = "jfuzz-" + PID + "-" + suffix;
        path = Path.of("/dev/shm/pbus." + name);
        // W for 65535 parameters (docs/segment-format.md §3) and the slack of §7's check.
        long turns = (128 + 4L * PARAM_MAX + 7) / 8 * 8;
        long size = turns + 8L * PARAM_MAX + 65536;
        try {
            wakeId = Native.shmCreatePrivate(size, 0666);
            long addr = Native.shmat(wakeId);
            if (addr == 0) {
                throw new IllegalStateException("shmat returned 0");
            }
            // Attached for the JVM's life, removed when it detaches (by id, it still attaches).
            Native.shmRemove(wakeId);
        } catch (Native.Errno e) {
            throw new IllegalStateException("making a wake segment: " + e.getMessage());
        }
        // Also when the test's own cleanup never runs (a fuzzing run ends by exiting).
        Runtime.getRuntime().addShutdownHook(new Thread(this::close));
    }

    /** Installs {@code image} (replacing what was installed), patched as an owner writes it. */
    public void put(byte[] image) {
        byte[] img = image.clone();
        if (img.length >= 256) {
            ByteBuffer b = ByteBuffer.wrap(img).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(16, img.length);
            b.putInt(120, (int) PID);
            b.putInt(124, (int) Proc.startToken(PID));
            b.putInt(220, wakeId);
            if (new String(img, 152, 7, StandardCharsets.ISO_8859_1).equals("vector\0")) {
                Arrays.fill(img, 152, 216, (byte) 0);
                byte[] n = name.getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(n, 0, img, 152, n.length);
            }
        }
        try {
            Files.write(path, img);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Removes the installed file (the wake segment goes with the JVM). */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
