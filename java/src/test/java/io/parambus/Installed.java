package io.parambus;

import io.parambus.internal.Native;
import io.parambus.internal.Proc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A vector image of tests/vectors installed as a live instance, as an owner makes one
 * (tests/vectors/README.md, "Installing an image"; the equivalent of check-vectors's
 * install()): this JVM plays the owner. It creates a System V wake segment (mode 0666)
 * filled from the wake image if there is one, writes its own pid and start token as
 * owner_pid/owner_start (or what the test asks for), the segment's id as wake_id,
 * replaces the LIVE placeholder token in lock words by the token of this process's main
 * thread (which lives as long as the JVM), renames the instance from "vector" to a name
 * of its own and writes /dev/shm/pbus.NAME, owned by this process's user (trusted). It
 * removes both when closed.
 */
final class Installed implements AutoCloseable {
    static final long TOKEN_MASK = (1L << 52) - 1;
    static final long TOKEN_GONE = 0x3FFFFFL | 1L << 22;
    static final long TOKEN_RECYCLED = 1L | 0x2AAAAAAAL << 22;
    static final long TOKEN_LIVE_PLACEHOLDER = 0x3FFFFEL | 0x155L << 22;
    static final long PID = ProcessHandle.current().pid();
    /** The token of this process's main thread (tid = pid), alive throughout. */
    static final long SELF_TOKEN = PID | Proc.startToken(PID) << 22;
    private static final AtomicInteger SERIAL = new AtomicInteger();

    final String name;
    final Path path;
    final int wakeId;
    final long wakeAddress;
    final MemorySegment wake;

    /** Owners the installer can name (segment-small.states). */
    enum Owner { ALIVE, GONE, OTHER_WAKE }

    @SuppressWarnings("restricted")
    private Installed(String name, Path path, int wakeId, long wakeAddress, long wakeSize) {
        this.name = name;
        this.path = path;
        this.wakeId = wakeId;
        this.wakeAddress = wakeAddress;
        this.wake = MemorySegment.ofAddress(wakeAddress).reinterpret(wakeSize);
    }

    static Path vectors() {
        return Path.of(TestSupport.sourceTree(), "tests", "vectors");
    }

    /** A .hex file of tests/vectors as bytes. */
    static byte[] hex(String file) {
        try {
            String text = Files.readString(vectors().resolve(file)).replace("\n", "");
            byte[] b = new byte[text.length() / 2];
            for (int k = 0; k < b.length; k++) {
                b[k] = (byte) Integer.parseInt(text.substring(2 * k, 2 * k + 2), 16);
            }
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Installed install(byte[] image, byte[] wakeImage) {
        return install(image, wakeImage, Owner.ALIVE, Map.of(), false);
    }

    /**
     * Install {@code image}: {@code patch} (offset → bytes) is applied last; {@code raw}
     * writes the image as it is.
     */
    @SuppressWarnings("restricted")
    static Installed install(byte[] image, byte[] wakeImage, Owner owner, Map<Integer, byte[]> patch, boolean raw) {
        byte[] img = image.clone();
        ByteBuffer b = ByteBuffer.wrap(img).order(ByteOrder.LITTLE_ENDIAN);
        long wakeSize = img.length >= 232 ? b.getLong(224) : 4096;
        String name = "jvector-" + PID + "-" + SERIAL.incrementAndGet();
        Path path = Path.of("/dev/shm/pbus." + name);
        int id;
        long addr;
        try {
            id = Native.shmCreatePrivate(Math.max(wakeSize, 1), 0666);
            addr = Native.shmat(id);
        } catch (Native.Errno e) {
            throw new IllegalStateException("installing a vector: " + e.getMessage());
        }
        MemorySegment w = MemorySegment.ofAddress(addr).reinterpret(Math.max(wakeSize, 1));
        if (wakeImage != null) {
            MemorySegment.copy(MemorySegment.ofArray(wakeImage), 0, w, 0, Math.min(wakeImage.length, wakeSize));
        }
        if (!raw && img.length >= 256) {
            long pid, start;
            switch (owner) {
                case GONE -> { pid = 0x3FFFFF; start = 1; }
                case OTHER_WAKE -> { pid = 1; start = Proc.startToken(1); }
                default -> { pid = PID; start = Proc.startToken(PID); }
            }
            b.putInt(120, (int) pid);
            b.putInt(124, (int) start);
            b.putInt(220, id);
            if (new String(img, 152, 7, java.nio.charset.StandardCharsets.ISO_8859_1).equals("vector\0")) {
                byte[] n = name.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                java.util.Arrays.fill(img, 152, 216, (byte) 0);
                System.arraycopy(n, 0, img, 152, n.length);
            }
            replaceLivePlaceholder(img, b);
        }
        for (Map.Entry<Integer, byte[]> e : patch.entrySet()) {
            System.arraycopy(e.getValue(), 0, img, e.getKey(), e.getValue().length);
        }
        try {
            Files.write(path, img);
        } catch (IOException e) {
            Native.shmdt(addr);
            throw new UncheckedIOException(e);
        }
        return new Installed(name, path, id, addr, Math.max(wakeSize, 1));
    }

    /** The LIVE placeholder in any lock word of a valid image becomes this process's token. */
    private static void replaceLivePlaceholder(byte[] img, ByteBuffer b) {
        try {
            int count = b.getInt(40);
            long descriptors = b.getLong(56);
            if (count > 65535 || descriptors + 128L * count > img.length) {
                return;
            }
            for (int i = 0; i < count; i++) {
                long slot = b.getLong((int) (descriptors + 128L * i + 48));
                if (slot < 0 || slot + 16 > img.length) {
                    continue;
                }
                long word = b.getLong((int) slot + 8);
                if ((word & TOKEN_MASK) == TOKEN_LIVE_PLACEHOLDER) {
                    b.putLong((int) slot + 8, word & ~TOKEN_MASK | SELF_TOKEN);
                }
            }
        } catch (IndexOutOfBoundsException e) {
            // Not an image with descriptors where the header says: nothing to replace.
        }
    }

    /** The installed value segment's bytes now. */
    ByteBuffer image() {
        try {
            return ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            Native.shmdt(wakeAddress);
            try {
                Native.shmRemove(wakeId);
            } catch (Native.Errno e) {
                // Already gone.
            }
        }
    }
}
