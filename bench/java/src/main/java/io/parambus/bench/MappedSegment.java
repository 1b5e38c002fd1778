// SPDX-License-Identifier: MIT
package io.parambus.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An instance's value segment mapped read-only by the benchmark itself, for
 * the read benchmarks' lower bound: one acquire load from a mapped segment
 * (what any in-place reader of the segment must do at least once per read).
 * Only the few fields needed to find a parameter's slot are read, as
 * docs/segment-format.md §2.1 and §2.2 lay them out; nothing is checked
 * beyond the bounds, since this is a benchmark of the load, not a reader.
 *
 * <p>Thread-safety: immutable after construction; {@link #close()} once,
 * after every reader is done.
 */
final class MappedSegment implements AutoCloseable {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;

    private final Arena arena;
    private final MemorySegment segment;

    /**
     * Maps {@code /dev/shm/pbus.INSTANCE} read-only in a shared arena, as a
     * reader that may be used from several threads maps it.
     *
     * @param instance the instance name
     * @throws IOException if the file cannot be opened or mapped
     */
    MappedSegment(String instance) throws IOException {
        arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(Path.of("/dev/shm/pbus." + instance),
                StandardOpenOption.READ)) {
            segment = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * The mapped segment.
     *
     * @return the read-only view
     */
    MemorySegment segment() {
        return segment;
    }

    /**
     * The offset of a parameter's slot (its first word is the slot's seq).
     *
     * @param name the parameter's name
     * @return the slot's offset from the segment's start
     * @throws IllegalArgumentException if no parameter has that name
     */
    long slotOffset(String name) {
        int count = segment.get(U32, 40);
        long descriptors = segment.get(U64, 56);
        long strings = segment.get(U64, 80);
        byte[] want = name.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < count; i++) {
            long d = descriptors + 128L * i;
            int off = segment.get(U32, d);
            int len = segment.get(U32, d + 4);
            if (len != want.length) {
                continue;
            }
            byte[] have = segment.asSlice(strings + Integer.toUnsignedLong(off), len)
                    .toArray(ValueLayout.JAVA_BYTE);
            if (java.util.Arrays.equals(have, want)) {
                return segment.get(U64, d + 48);
            }
        }
        throw new IllegalArgumentException("no parameter " + name + " in the segment");
    }

    /** Unmaps the segment. */
    @Override
    public void close() {
        arena.close();
    }
}
