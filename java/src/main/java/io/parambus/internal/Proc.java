package io.parambus.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Is a process or thread still there (docs/segment-format.md §4.3, "Who is dead")?
 * A task is named by its id and the low 30 bits of its start time (field 22 of
 * {@code /proc/ID/stat}), since ids are reused; a zombie thread is dead, and so is a
 * zombie process unless other threads of it still run. Used for dead lock holders and
 * biased writers, and for the instance's owner (pbusd).
 *
 * <p>Threads: every method may be called from any thread; each reads {@code /proc}
 * (a few system calls), so none belongs on a hot path.
 */
public final class Proc {
    private Proc() {
    }

    /** The start token's bits: the low 30 bits of field 22. */
    public static final long START_TOKEN_MASK = 0x3FFFFFFFL;

    /** The state letter (field 3) and start time (field 22) of /proc/ID/stat. */
    record Stat(char state, long start) {
    }

    /** Null if /proc/ID/stat does not exist; an IOException if it exists but cannot be read. */
    private static Stat readStat(long id) throws IOException {
        String text;
        try {
            text = new String(Files.readAllBytes(Path.of("/proc", Long.toString(id), "stat")),
                    StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            return null;
        }
        return parseStat(id, text);
    }

    /** The fields of a /proc/ID/stat line (package-private: the parser's fuzz target calls it). */
    static Stat parseStat(long id, String text) throws IOException {
        // The command name may hold spaces and parentheses: fields start after the last ')'.
        int close = text.lastIndexOf(')');
        if (close < 0 || close + 2 >= text.length() || text.charAt(close + 1) != ' ') {
            throw new IOException("malformed /proc/" + id + "/stat");
        }
        String[] fields = text.substring(close + 2).trim().split(" +");
        if (fields.length < 20) {
            throw new IOException("short /proc/" + id + "/stat");
        }
        try {
            return new Stat(fields[0].charAt(0), Long.parseUnsignedLong(fields[19]));
        } catch (NumberFormatException e) {
            throw new IOException("malformed /proc/" + id + "/stat", e);
        }
    }

    /** The start token of process or thread {@code id} (0 if it cannot be read). */
    public static long startToken(long id) {
        try {
            Stat s = readStat(id);
            return s == null ? 0 : s.start() & START_TOKEN_MASK;
        } catch (IOException e) {
            return 0;
        }
    }

    private static long threadCount(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"),
                    StandardCharsets.ISO_8859_1)) {
                if (line.startsWith("Threads:")) {
                    return Long.parseLong(line.substring(8).trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    private static boolean alive(long id, long start, boolean thread) {
        if (id == 0) {
            return false;
        }
        Stat s;
        try {
            s = readStat(id);
        } catch (IOException e) {
            // It exists but cannot be read: the id alone decides.
            int r = Native.killZero((int) id);
            return r == 0 || r == Native.EPERM;
        }
        if (s == null || s.state() == 'X') {
            return false;
        }
        if (s.state() == 'Z' && (thread || threadCount(id) <= 1)) {
            return false;
        }
        return start == 0 || (s.start() & START_TOKEN_MASK) == start;
    }

    /** Whether the process {@code pid} that started at {@code start} (0: any) is alive. */
    public static boolean processAlive(long pid, long start) {
        return alive(pid, start, false);
    }

    /** Whether the thread {@code tid} that started at {@code start} (0: any) is alive. */
    public static boolean threadAlive(long tid, long start) {
        return alive(tid, start, true);
    }
}
