package io.parambus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The test vectors of tests/vectors (docs/segment-format.md §8), against this reader and
 * writer: every valid image decodes exactly to its .expected file (values at the edges
 * of their types and every value of §2.8 included), every invalid image is refused by the
 * check of §7 that segment-bad.expected names, segment-small.states' states and owners,
 * and what a non-biasing writer leaves in segment-edge.hex (segment-edge.writes, mode
 * "nobias", which is what a Java writer is).
 */
class VectorTest {
    private static final long T1 = 1767225601000000000L;

    private static final class Mismatches {
        final List<String> list = new ArrayList<>();

        void check(boolean ok, String what) {
            if (!ok) {
                list.add(what);
            }
        }

        void eq(Object want, Object got, String what) {
            check(java.util.Objects.equals(want, got), what + ": expected " + want + ", got " + got);
        }

        void assertNone(String context) {
            assertTrue(list.isEmpty(), context + ": " + list.size() + " mismatches: " + String.join("; ", list));
        }
    }

    static String hex(byte[] b, int n) {
        return n == 0 ? "-" : HexFormat.of().formatHex(b, 0, n);
    }

    static String lockName(long word, Map<Long, String> names) {
        if (word == 0) {
            return "0";
        }
        if (word == ParamTable.SHARED) {
            return "SHARED";
        }
        long token = word & Installed.TOKEN_MASK;
        String t = names.getOrDefault(token, Long.toHexString(token));
        int state = (int) (word >>> 62);
        if (state == 1) {
            return "BIASED|" + t;
        }
        if (state == 0) {
            return ((word >>> 61 & 1) != 0 ? "HELD+WAITERS|" : "HELD|") + t;
        }
        return "STATE" + state + "|" + t;
    }

    static Map<Long, String> tokenNames() {
        Map<Long, String> names = new HashMap<>();
        names.put(Installed.TOKEN_GONE, "GONE");
        names.put(Installed.TOKEN_RECYCLED, "RECYCLED");
        names.put(Installed.SELF_TOKEN, "LIVE");
        return names;
    }

    private static String number(ParamType t, long bits) {
        ParamType e = t.element();
        if (e.isFloating()) {
            return Double.toString(Double.longBitsToDouble(bits));
        }
        return e.isUnsignedInteger() ? Long.toUnsignedString(bits) : Long.toString(bits);
    }

    private static boolean sameNumber(ParamType t, String want, long bits) {
        if (want.equals("-")) {
            return false;
        }
        if (t.element().isFloating()) {
            return Double.parseDouble(want) == Double.longBitsToDouble(bits);
        }
        return t.element().isUnsignedInteger() ? Long.parseUnsignedLong(want) == bits : Long.parseLong(want) == bits;
    }

    /** Decode an installed image through the table and compare with an .expected file. */
    private static void compare(String expectedFile, Installed inst, ParamTable t, Mismatches m) {
        MemorySegment seg = t.segment();
        Map<Long, String> names = tokenNames();
        long aux = seg.get(ValueLayout.JAVA_LONG, 112);
        Sample s = new Sample();
        for (String[] r : Expected.records(expectedFile)) {
            switch (r[0]) {
                case "header" -> {
                    Object want = Expected.literal(r[2]);
                    Object got = switch (r[1]) {
                        case "instance" -> t.instance().equals(inst.name) ? "vector" : t.instance();
                        case "interface" -> t.interfaceName();
                        case "version" -> List.of(BigInteger.valueOf(t.interfaceMajor()),
                                BigInteger.valueOf(t.interfaceMinor()));
                        case "state" -> BigInteger.valueOf(seg.get(ValueLayout.JAVA_INT, 52));
                        case "schema_hash" -> Values.unsigned(t.schemaHash());
                        case "instance_id" -> Values.unsigned(t.instanceId());
                        case "param_count" -> BigInteger.valueOf(t.paramCount());
                        case "enum_count" -> BigInteger.valueOf(seg.get(ValueLayout.JAVA_INT, 44));
                        case "created_ns" -> Values.unsigned(t.createdNs());
                        case "save_count" -> BigInteger.valueOf(seg.get(ValueLayout.JAVA_INT, 216));
                        case "revocations" -> Values.unsigned(seg.get(ValueLayout.JAVA_LONG, 232));
                        default -> "unknown header field " + r[1];
                    };
                    m.eq(want, got, "header " + r[1]);
                }
                case "param" -> {
                    Param p = t.param(r[1]);
                    String at = "param " + r[1];
                    m.eq(r[2], p.type().spelling(), at + " type");
                    List<String> fl = new ArrayList<>();
                    if (p.isReadOnly()) {
                        fl.add("readonly");
                    }
                    if (p.isPersistent()) {
                        fl.add("persistent");
                    }
                    if (p.isNoRead()) {
                        fl.add("noread");
                    }
                    if (p.isNoSubscriptions()) {
                        fl.add("nosubscriptions");
                    }
                    m.eq(r[3], fl.isEmpty() ? "-" : String.join(",", fl), at + " flags");
                    m.eq(r[4], p.updateClass().name().toLowerCase(Locale.ROOT), at + " class");
                    m.eq(r[5], p.unit().isEmpty() ? "-" : p.unit(), at + " unit");
                    m.check(r[6].equals("-") ? !p.hasMin() : p.hasMin() && sameNumber(p.type(), r[6], p.minBits()),
                            at + " min: expected " + r[6] + ", got " + (p.hasMin() ? number(p.type(), p.minBits()) : "-"));
                    m.check(r[7].equals("-") ? !p.hasMax() : p.hasMax() && sameNumber(p.type(), r[7], p.maxBits()),
                            at + " max: expected " + r[7] + ", got " + (p.hasMax() ? number(p.type(), p.maxBits()) : "-"));
                    m.check(r[8].equals("-") ? !p.hasStep() : p.hasStep() && sameNumber(p.type(), r[8], p.stepBits()),
                            at + " step: expected " + r[8]);
                    byte[] d = p.defaultValue();
                    m.eq(r[9], !p.hasDefault() ? "none" : hex(d, d.length), at + " default");
                    List<String> en = new ArrayList<>();
                    for (Enumerator e : p.enumerators()) {
                        en.add(e.label() + "=" + e.value());
                    }
                    m.eq(r[10], en.isEmpty() ? "-" : String.join(",", en), at + " enumerators");
                    m.eq(r[11], p.group().isEmpty() ? "-" : p.group(), at + " group");
                    m.eq(r[12], p.description().isEmpty() ? "-" : p.description(), at + " description");
                }
                case "value" -> {
                    int i = t.index(r[1]);
                    String at = "value " + r[1];
                    t.read(i, s);
                    m.eq(r[2], Long.toUnsignedString(s.version()), at + " seq");
                    String status = s.statusCode() <= 3 ? s.status().label() : Integer.toString(s.statusCode());
                    m.eq(r[3], status, at + " status");
                    m.eq(r[4], Long.toUnsignedString(s.timestampNs()), at + " timestamp");
                    m.eq(r[5], hex(s.bytes(), s.length()), at + " stored");
                    Object want = Expected.literal(r[6]);
                    Object got = Values.read(t, i);
                    m.check(Values.same(got, want), at + " value: expected " + r[6] + ", got " + got);
                }
                case "words" -> {
                    int i = t.index(r[1]);
                    String at = "words " + r[1];
                    m.eq(r[2], lockName(seg.get(ValueLayout.JAVA_LONG, t.slot[i] + 8), names), at + " lock");
                    long w = seg.get(ValueLayout.JAVA_LONG, aux + 16L * i + 8);
                    m.eq(r[3], w == 0 ? "0" : names.getOrDefault(w, Long.toHexString(w)), at + " writing");
                    m.eq(r[4], Long.toUnsignedString(t.savedVersion(i)), at + " saved_seq");
                }
                case "wake" -> m.check(wakeField(inst.wake, t.paramCount(), r[1], Expected.literal(r[2])),
                        "wake " + r[1] + ": expected " + r[2]);
                default -> m.check(false, "unknown record " + r[0]);
            }
        }
    }

    private static boolean wakeField(MemorySegment w, int count, String field, Object want) {
        long turns = SegmentLayout.turnsOffset(count);
        Object got = switch (field) {
            case "magic" -> {
                byte[] b = new byte[8];
                MemorySegment.copy(w, ValueLayout.JAVA_BYTE, 0, b, 0, 8);
                yield new String(b, java.nio.charset.StandardCharsets.ISO_8859_1);
            }
            case "format_version" -> BigInteger.valueOf(w.get(ValueLayout.JAVA_INT, 8));
            case "param_count" -> BigInteger.valueOf(w.get(ValueLayout.JAVA_INT, 12));
            case "instance_id" -> Values.unsigned(w.get(ValueLayout.JAVA_LONG, 16));
            case "notify" -> BigInteger.valueOf(Integer.toUnsignedLong(w.get(ValueLayout.JAVA_INT, 64)));
            case "any_waiters" -> BigInteger.valueOf(w.get(ValueLayout.JAVA_INT, 68));
            case "param_waiters" -> BigInteger.valueOf(w.get(ValueLayout.JAVA_INT, 72));
            case "waiters" -> {
                List<Object> l = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    l.add(BigInteger.valueOf(w.get(ValueLayout.JAVA_INT, 128 + 4L * i)));
                }
                yield l;
            }
            case "turns" -> {
                List<Object> l = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    l.add(Values.unsigned(w.get(ValueLayout.JAVA_LONG, turns + 8L * i)));
                }
                yield l;
            }
            default -> null;
        };
        if (want instanceof Expected.Bytes b) {
            want = new String(b.value(), java.nio.charset.StandardCharsets.ISO_8859_1);
        }
        return Values.same(got, want);
    }

    private static void decodes(String image, String wakeImage, String expected) {
        try (Installed inst = Installed.install(Installed.hex(image), wakeImage == null ? null : Installed.hex(wakeImage));
                ParamTable t = ParamTable.open(inst.name)) {
            Mismatches m = new Mismatches();
            compare(expected, inst, t, m);
            m.assertNone(image);
        }
    }

    @Test
    void everyTypeDecodesAsExpected() {
        decodes("segment-v2.hex", null, "segment.expected");
    }

    @Test
    void smallImageDecodesAsExpected() {
        decodes("segment-small.hex", null, "segment-small.expected");
    }

    @Test
    void edgeValuesAndWakeSegmentDecodeAsExpected() {
        decodes("segment-edge.hex", "wake-edge.hex", "segment-edge.expected");
    }

    @Test
    void version1IsRefused() {
        try (Installed inst = Installed.install(Installed.hex("segment-v1.hex"), null, Installed.Owner.ALIVE, Map.of(),
                true)) {
            InvalidSegmentException e = assertThrows(InvalidSegmentException.class, () -> ParamTable.open(inst.name));
            assertEquals("version", e.check(), e.getMessage());
            assertEquals("EPROTO", e.errno());
        }
    }

    @Test
    void badImagesAreAllListed() throws Exception {
        TreeSet<String> files = new TreeSet<>();
        try (Stream<Path> s = Files.list(Installed.vectors())) {
            s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("segment-bad-") && n.endsWith(".hex"))
                    .forEach(files::add);
        }
        TreeSet<String> listed = new TreeSet<>();
        for (String[] r : Expected.records("segment-bad.expected")) {
            listed.add(r[0]);
        }
        assertEquals(listed, files);
        assertEquals(44, files.size());
    }

    @Test
    void everyBadImageIsRefusedByItsCheck() {
        List<String> wrong = new ArrayList<>();
        for (String[] r : Expected.records("segment-bad.expected")) {
            String file = r[0], errno = r[1], check = r[2];
            try (Installed inst = Installed.install(Installed.hex(file), null)) {
                try (ParamTable t = ParamTable.open(inst.name)) {
                    wrong.add(file + ": opened (" + t + ")");
                } catch (InvalidSegmentException e) {
                    if (!e.check().equals(check) || !e.errno().equals(errno) || !e.getMessage().contains(check)
                            || e.getMessage().contains("\n")) {
                        wrong.add(file + ": check " + e.check() + " (" + e.getMessage() + "), expected " + check);
                    }
                } catch (ParambusException e) {
                    wrong.add(file + ": " + e.getMessage() + ", expected check " + check);
                }
            }
        }
        assertTrue(wrong.isEmpty(), String.join("; ", wrong));
    }

    @Test
    void statesAndOwnersAsTheStatesFileSays() {
        List<String> wrong = new ArrayList<>();
        byte[] small = Installed.hex("segment-small.hex");
        for (String[] r : Expected.records("segment-small.states")) {
            int state = Integer.parseInt(r[0]);
            Installed.Owner owner = Installed.Owner.valueOf(r[1].toUpperCase(Locale.ROOT).replace('-', '_'));
            String want = r[2], waitWant = r[3], writeWant = r[4];
            String line = String.join(" ", r);
            byte[] st = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(state).array();
            try (Installed inst = Installed.install(small, null, owner, Map.of(52, st), false)) {
                ParamTable t;
                try {
                    t = ParamTable.open(inst.name);
                } catch (ParambusException e) {
                    if (!e.errno().equals(want)) {
                        wrong.add(line + ": open failed with " + e.getMessage());
                    }
                    continue;
                }
                try (t; Watch w = t.watchAll()) {
                    String got = t.state().name().toLowerCase(Locale.ROOT);
                    if (!got.equals(want)) {
                        wrong.add(line + ": state " + got);
                    }
                    String wait;
                    try {
                        wait = w.await(Duration.ZERO) ? "changed" : "ETIMEDOUT";
                    } catch (ParambusException e) {
                        wait = e.errno();
                    }
                    if (!wait.equals(waitWant)) {
                        wrong.add(line + ": wait " + wait);
                    }
                }
                try (ParamTable wt = ParamTable.open(inst.name, ParamTable.Access.WRITE)) {
                    String write;
                    try {
                        wt.setDouble(wt.index("volts"), 2.0);
                        write = "0";
                    } catch (ParambusException e) {
                        write = e.errno();
                    }
                    if (!write.equals(writeWant)) {
                        wrong.add(line + ": write " + write);
                    }
                }
            }
        }
        assertTrue(wrong.isEmpty(), String.join("; ", wrong));
    }

    @Test
    void edgeWritesOfAWriterWithoutBias() {
        List<String[]> plan = new ArrayList<>();
        Map<String, Object> after = new HashMap<>();
        for (String[] r : Expected.records("segment-edge.writes")) {
            if (r[1].equals("nobias")) {
                if (r[0].equals("write")) {
                    plan.add(r);
                } else {
                    after.put(r[2], Expected.literal(r[3]));
                }
            }
        }
        assertFalse(plan.isEmpty());
        byte[] edge = Installed.hex("segment-edge.hex");
        Mismatches m = new Mismatches();
        try (Installed inst = Installed.install(edge, Installed.hex("wake-edge.hex"));
                ParamTable t = ParamTable.open(inst.name, ParamTable.Access.PROVIDER)) {
            // What every parameter holds before: the ones not written must stay so.
            Map<String, String> before = new HashMap<>();
            Sample s = new Sample();
            for (Param p : t.params()) {
                t.read(p.index(), s);
                before.put(p.name(), Long.toUnsignedString(s.version()) + " " + hex(s.bytes(), s.length()));
            }
            long me = WriterThread.current("test", "edge").token;
            Map<String, Integer> written = new HashMap<>();
            for (int k = 1; k <= plan.size(); k++) {
                String[] w = plan.get(k - 1);
                Param p = t.param(w[2]);
                String result;
                WriteBatch b = t.batch().timestamp(T1 + k);
                Values.addText(b, p, w[3]);
                long started = System.nanoTime();
                try {
                    b.commit();
                    result = "0";
                    written.put(p.name(), k);
                } catch (ParambusException e) {
                    result = e.errno();
                    long ms = (System.nanoTime() - started) / 1_000_000;
                    m.check(!result.equals("EBUSY") || (ms >= 1000 && ms < 3000), p.name()
                            + ": EBUSY after " + ms + " ms, not after a second");
                }
                m.eq(w[4], result, p.name() + " result");
            }
            Map<String, Long> names = new HashMap<>();
            Map<Long, String> tokens = tokenNames();
            tokens.put(me, "ME");
            ByteBuffer img = inst.image();
            long aux = img.getLong(112);
            for (String[] w : plan) {
                int i = t.index(w[2]);
                long slot = t.slot[i];
                m.eq(w[5], Long.toUnsignedString(img.getLong((int) slot)), w[2] + " seq");
                m.eq(w[6], lockName(img.getLong((int) slot + 8), tokens), w[2] + " lock");
                long wr = img.getLong((int) (aux + 16L * i + 8));
                m.eq(w[7], wr == 0 ? "0" : tokens.getOrDefault(wr, Long.toHexString(wr)), w[2] + " writing");
            }
            assertTrue(names.isEmpty());
            for (Map.Entry<String, Object> e : after.entrySet()) {
                Object got = e.getKey().equals("revocations") ? Values.unsigned(img.getLong(232)) : null;
                if (got != null) {
                    m.check(Values.same(got, e.getValue()), "revocations: " + got + ", expected " + e.getValue());
                } else {
                    m.check(wakeField(inst.wake, t.paramCount(), e.getKey(), e.getValue()),
                            e.getKey() + ": expected " + e.getValue());
                }
            }
            // Read back: each written value with its timestamp; every other parameter unchanged.
            for (Param p : t.params()) {
                t.read(p.index(), s);
                Integer k = written.get(p.name());
                if (k != null) {
                    String text = plan.get(k - 1)[3];
                    m.eq(T1 + k, s.timestampNs(), p.name() + " timestamp");
                    m.eq(Status.OK, s.status(), p.name() + " status");
                    Object got = Values.read(t, p.index());
                    m.check(textMatches(p, text, got), p.name() + ": read back " + got + ", wrote " + text);
                } else {
                    m.eq(before.get(p.name()), Long.toUnsignedString(s.version()) + " " + hex(s.bytes(), s.length()),
                            p.name() + " unchanged");
                }
            }
        }
        m.assertNone("segment-edge.writes nobias");
    }

    private static boolean textMatches(Param p, String text, Object got) {
        return switch (p.type()) {
            case ENUM -> got.equals(text);
            case BOOL -> got.equals(text.equals("true"));
            case STRING -> got.equals(text);
            case FLOAT, DOUBLE -> got.equals(Double.parseDouble(text));
            case FLOAT_ARRAY -> {
                List<Object> want = new ArrayList<>();
                for (String e : text.split(",")) {
                    want.add(Double.parseDouble(e));
                }
                yield Values.same(got, want);
            }
            default -> got.equals(new BigInteger(text));
        };
    }
}
