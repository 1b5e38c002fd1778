package io.parambus.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.fuzz.Vectors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-proc} (tests/fuzz/run): the reading of {@code /proc/ID/stat}
 * ({@link Proc}, docs/segment-format.md §4.3 "Who is dead"), whose second field is a
 * command name that any process chooses: spaces, parentheses, newlines, anything but
 * NUL, up to 15 bytes. The input's first 15 bytes (up to a NUL) are a name, its 16th
 * byte a state letter, its next 8 a start time.
 *
 * <p>Checked: a line as the kernel writes it, with that name, parses to that state and
 * start time; the input itself read as a line parses or is refused with
 * {@link IOException}, nothing else; and the real kernel agrees — a thread of this JVM
 * named so (through {@code /proc/self/task/TID/comm}) keeps its start token and stays
 * alive to {@link Proc#threadAlive}.
 *
 * <p>Seeds: names made of the characters that matter (spaces, parentheses, digits,
 * state letters, newlines).
 */
class ProcFuzzTest {
    private static final int COMM_MAX = 15;
    private static long tid;
    private static long token;

    /** A thread of this JVM that waits while the target renames it; its tid and start token. */
    private static synchronized void helper() throws InterruptedException {
        if (tid != 0) {
            return;
        }
        CountDownLatch started = new CountDownLatch(1);
        long[] id = new long[1];
        Thread t = Thread.ofPlatform().daemon().name("jfuzz-proc").start(() -> {
            id[0] = Native.gettid();
            started.countDown();
            for (;;) {
                LockSupport.park();
            }
        });
        started.await();
        assertTrue(t.isAlive());
        tid = id[0];
        token = Proc.startToken(tid);
        assertTrue(token != 0, "the helper thread's start token");
    }

    static Stream<Arguments> seeds() {
        List<byte[]> s = new ArrayList<>();
        for (String name : List.of("java", "a b", ") Z 1 2 3", "(", ")", "x) R (y", "))) )", "1 2 3 4 5 6 7 8",
                "a\nb) S", " ", "pbusd")) {
            byte[] n = name.getBytes(StandardCharsets.ISO_8859_1);
            ByteBuffer b = ByteBuffer.allocate(COMM_MAX + 9);
            b.put(Arrays.copyOf(n, COMM_MAX)).put((byte) 'S').putLong(123456789L);
            s.add(b.array());
        }
        return Vectors.arguments(s);
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(10)
    void statLine(byte[] input) throws Exception {
        int n = 0;
        while (n < Math.min(COMM_MAX, input.length) && input[n] != 0) {
            n++;
        }
        String comm = new String(input, 0, n, StandardCharsets.ISO_8859_1);
        char state = input.length > COMM_MAX ? (char) ('A' + (input[COMM_MAX] & 0xFF) % 26) : 'S';
        long start = 0;
        for (int k = COMM_MAX + 1; k < Math.min(input.length, COMM_MAX + 9); k++) {
            start = start << 8 | (input[k] & 0xFF);
        }
        start &= Long.MAX_VALUE;

        // As the kernel writes it: "pid (comm) state" and 49 more numbers; field 22 the start.
        StringBuilder line = new StringBuilder("4242 (").append(comm).append(") ").append(state);
        for (int field = 4; field <= 52; field++) {
            line.append(' ').append(field == 22 ? Long.toString(start) : Integer.toString(field));
        }
        line.append('\n');
        Proc.Stat st = Proc.parseStat(4242, line.toString());
        assertEquals(state, st.state(), "state of " + line);
        assertEquals(start, st.start(), "start time of " + line);

        // Anything at all: parsed, or refused as I/O that makes no sense.
        try {
            Proc.parseStat(1, new String(input, StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            assertTrue(e.getMessage().startsWith("malformed /proc/1/stat") || e.getMessage().startsWith("short /proc/1/stat"),
                    e.getMessage());
        }

        // The kernel: a thread named so is still itself and alive.
        helper();
        if (n > 0) {
            Files.write(Path.of("/proc/self/task/" + tid + "/comm"), Arrays.copyOf(input, n));
            assertEquals(token, Proc.startToken(tid), "the start token of a thread named " + comm);
            assertTrue(Proc.threadAlive(tid, token), "a thread named " + comm + " taken for dead");
        }
    }
}
