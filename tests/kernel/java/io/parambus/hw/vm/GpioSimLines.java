package io.parambus.hw.vm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The outside world of one gpio-sim chip's lines, fast: the {@code sim_gpioK/pull} and
 * {@code sim_gpioK/value} files (tests/kernel/ENVIRONMENT.md section 3) opened once and
 * written/read in place with {@code pwrite}/{@code pread} at offset 0, for the tests that
 * toggle lines thousands of times or sample a level in a tight loop ({@link Kenv#simPull}
 * looks the chip up again on every call). Plain file I/O: nothing here goes through the
 * binding under test. Not thread-safe: one thread per object (a sampler opens its own).
 */
final class GpioSimLines implements AutoCloseable {
    private static final byte[] UP = "pull-up".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DOWN = "pull-down".getBytes(StandardCharsets.US_ASCII);

    private final FileChannel[] pulls;
    private final FileChannel[] values;
    private final ByteBuffer up = ByteBuffer.allocateDirect(UP.length).put(UP);
    private final ByteBuffer down = ByteBuffer.allocateDirect(DOWN.length).put(DOWN);
    private final ByteBuffer level = ByteBuffer.allocateDirect(8);

    /** Opens the pull and value files of lines 0..lines-1 of the live gpio-sim chip label. */
    GpioSimLines(String label, int lines) {
        String dir = Kenv.simDir(label);
        pulls = new FileChannel[lines];
        values = new FileChannel[lines];
        try {
            for (int k = 0; k < lines; k++) {
                pulls[k] = FileChannel.open(Path.of(dir, "sim_gpio" + k, "pull"), StandardOpenOption.WRITE);
                values[k] = FileChannel.open(Path.of(dir, "sim_gpio" + k, "value"), StandardOpenOption.READ);
            }
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("opening the sim files of " + label, e);
        }
    }

    /** Drives input line k from the outside: pull-up or pull-down. */
    void pull(int k, boolean high) {
        ByteBuffer b = high ? up : down;
        b.rewind();
        try {
            int n = pulls[k].write(b, 0);
            if (n != b.limit()) {
                throw new IllegalStateException("short write to sim_gpio" + k + "/pull: " + n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing sim_gpio" + k + "/pull", e);
        }
    }

    /** The level line k has on the outside: 0 or 1. */
    int value(int k) {
        level.clear();
        try {
            int n = values[k].read(level, 0);
            byte c = level.get(0);
            if (n < 1 || (c != '0' && c != '1')) {
                throw new IllegalStateException("sim_gpio" + k + "/value reads " + n + " bytes, first " + c);
            }
            return c - '0';
        } catch (IOException e) {
            throw new UncheckedIOException("reading sim_gpio" + k + "/value", e);
        }
    }

    @Override
    public void close() {
        for (FileChannel[] cs : new FileChannel[][] {pulls, values}) {
            for (FileChannel c : cs) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            }
        }
    }
}
