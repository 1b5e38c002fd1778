package io.parambus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.fuzz.CLib;
import io.parambus.fuzz.Instance;
import io.parambus.fuzz.Vectors;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-segment} (tests/fuzz/run): the value segment's validation
 * (docs/segment-format.md §7) and its reading, on a segment mapped from
 * {@code /dev/shm} as another process would leave it. The input is the segment's bytes;
 * it is installed as an instance the way tests/vectors/README.md says an owner makes one
 * (this JVM is the owner: its pid and start token, its wake segment's id, the file size
 * as {@code segment_size}, the name {@code vector} renamed to the instance's), then
 * opened by {@link ParamTable#open} and by the C library, the reference.
 *
 * <p>Checked: the Java reader refuses exactly the segments the C library refuses (with
 * {@link InvalidSegmentException}, EPROTO, a check of §7 and a one-line message) and
 * opens the others; of an opened one it describes every parameter as the C library does
 * (names, texts, type, flags, class, sizes, limits, default, enumerators) and reads every
 * value as the C reader does (version, timestamp, status byte, length, bytes); its
 * typed getters return what §2.8 says of those bytes (any non-zero bool is true,
 * integers sign- or zero-extended, floating point with its bits, invalid UTF-8 replaced,
 * whole array elements only); its state is the C library's; a wait of timeout 0 returns
 * false or ESTALE. Nothing else may be thrown, and nothing may hang.
 *
 * <p>Seeds: every segment image of tests/vectors (valid, invalid, version 1).
 */
class SegmentFuzzTest {
    private static final Set<String> CHECKS = Set.of("size", "magic", "version", "header-size", "segment-size",
            "descriptor-size", "param-count", "instance-terminated", "wake-size", "region-inside", "region-aligned",
            "strings-size", "string", "enum-record", "enumerators-inside", "name-length", "default-inside", "type",
            "update-class", "value-size", "default-length", "copy-stride", "copy-count", "slot-size", "slot-aligned",
            "slot-inside", "element-size", "enum-index", "instance");

    private static Instance instance;

    private static synchronized Instance instance() {
        if (instance == null) {
            instance = new Instance("segment");
        }
        return instance;
    }

    @AfterAll
    static void removeInstance() {
        if (instance != null) {
            instance.close();
        }
    }

    static Stream<Arguments> seeds() {
        List<byte[]> images = new ArrayList<>();
        for (String name : Vectors.names("segment-*.hex")) {
            images.add(Vectors.hex(name));
        }
        return Vectors.arguments(images);
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(10)
    void openAndRead(byte[] image) {
        Instance s = instance();
        s.put(image);
        int[] result = new int[1];
        ParamTable t = null;
        InvalidSegmentException refused = null;
        try (CLib.Table c = CLib.Table.open(s.name, result)) {
            try {
                t = ParamTable.open(s.name);
            } catch (InvalidSegmentException e) {
                refused = e;
            }
            if (c == null) {
                assertEquals("EPROTO", CLib.errnoName(result[0]), "the C library refused the segment");
                if (t != null) {
                    fail("the Java reader opened a segment that the C library refuses with EPROTO");
                }
                assertTrue(CHECKS.contains(refused.check()), "refused by an unknown check: " + refused.check());
                assertEquals("EPROTO", refused.errno());
                String m = refused.getMessage();
                assertTrue(m.startsWith("open " + s.name + ": EPROTO: ") && m.contains("check " + refused.check())
                        && !m.contains("\n"), "the refusal's message: " + m);
                return;
            }
            if (refused != null) {
                fail("the Java reader refused a segment that the C library opens: " + refused.getMessage());
            }
            compare(t, c);
        } finally {
            if (t != null) {
                t.close();
            }
        }
    }

    private static String text(byte[] cBytes) {
        return new String(cBytes, StandardCharsets.UTF_8);
    }

    private static long le(byte[] b, int off, int size) {
        long v = 0;
        for (int k = size - 1; k >= 0; k--) {
            v = v << 8 | (b[off + k] & 0xFF);
        }
        return v;
    }

    /** An opened table against the C library's view of the same segment. */
    private static void compare(ParamTable t, CLib.Table c) {
        assertEquals(c.paramCount(), t.paramCount(), "parameter count");
        int cState = c.state();
        TableState want = switch (cState) {
            case 1 -> TableState.LIVE;
            case 2 -> TableState.CLOSED;
            case 3 -> TableState.REPLACED;
            case 4 -> TableState.ORPHANED;
            default -> throw new AssertionError("pbus_table_state: " + cState);
        };
        assertEquals(want, t.state(), "state");
        Sample sample = new Sample();
        for (int i = 0; i < t.paramCount(); i++) {
            Param p = t.param(i);
            String at = "parameter " + i + " (" + p.name() + ")";
            CLib.Info ci = c.describe(i);
            assertEquals(text(ci.name()), p.name(), at + ": name");
            assertEquals(text(ci.unit()), p.unit(), at + ": unit");
            assertEquals(text(ci.description()), p.description(), at + ": description");
            assertEquals(text(ci.group()), p.group(), at + ": group");
            assertEquals(ci.type(), p.type().code(), at + ": type");
            int flags = (p.isReadOnly() ? 1 : 0) | (p.isPersistent() ? 2 : 0) | (p.isNoRead() ? 4 : 0)
                    | (p.isNoSubscriptions() ? 8 : 0) | (p.hasMin() ? 16 : 0) | (p.hasMax() ? 32 : 0)
                    | (p.hasStep() ? 64 : 0) | (p.hasDefault() ? 128 : 0);
            assertEquals(ci.flags() & 0xFF, flags, at + ": flags");
            assertEquals(ci.updateClass(), p.updateClass().ordinal(), at + ": update class");
            assertEquals(ci.valueSize(), p.valueSize(), at + ": value size");
            assertEquals(ci.elementSize(), p.elementSize(), at + ": element size");
            if (p.hasMin()) {
                assertEquals(ci.min(), p.minBits(), at + ": min");
            }
            if (p.hasMax()) {
                assertEquals(ci.max(), p.maxBits(), at + ": max");
            }
            if (p.hasStep()) {
                assertEquals(ci.step(), p.stepBits(), at + ": step");
            }
            if (p.hasDefault()) {
                assertArrayEquals(ci.defaultValue(), p.defaultValue(), at + ": default");
            }
            List<Enumerator> en = p.enumerators();
            assertEquals(ci.enumCount(), en.size(), at + ": enumerators");
            for (int k = 0; k < en.size(); k++) {
                assertEquals(text(ci.labels().get(k)), en.get(k).label(), at + ": enumerator " + k);
                assertEquals(ci.values().get(k), en.get(k).value(), at + ": enumerator " + k);
            }
            assertEquals(p.name(), t.param(t.index(p.name())).name(), at + ": found by name");
            assertTrue(t.index(p.name()) <= i, at + ": found by name at a later index");

            CLib.Read cr = c.read(i);
            assertTrue(cr.result() >= 0, at + ": the C reader failed with " + cr.result());
            t.read(i, sample);
            assertEquals(i, sample.index(), at + ": sample index");
            assertEquals(cr.seq(), sample.version(), at + ": version");
            assertEquals(cr.timestampNs(), sample.timestampNs(), at + ": timestamp");
            assertEquals(cr.status(), sample.statusCode(), at + ": status");
            assertEquals(cr.length(), sample.length(), at + ": length");
            assertArrayEquals(cr.value(), Arrays.copyOf(sample.bytes(), sample.length()), at + ": value");
            typed(t, p, Arrays.copyOf(sample.bytes(), sample.length()), sample, at);
        }
        try (Watch w = t.watchAll()) {
            try {
                assertTrue(!w.await(Duration.ZERO), "a wait saw a change in a segment nobody writes");
            } catch (ParambusException e) {
                assertEquals("ESTALE", e.errno(), "a wait: " + e.getMessage());
                assertTrue(cState == 2 || cState == 3, "ESTALE in state " + cState);
            }
        }
    }

    /** The typed getters against §2.8 applied to the value's bytes {@code v}. */
    private static void typed(ParamTable t, Param p, byte[] v, Sample s, String at) {
        int i = p.index();
        ParamType type = p.type();
        int es = type.elementSize();
        if (Sample.isScalar(type)) {
            assertEquals(p.valueSize(), v.length, at + ": a scalar's length is its size");
        } else {
            assertTrue(v.length <= p.valueSize(), at + ": length " + v.length + " above the capacity");
        }
        long raw = Sample.isScalar(type) ? le(v, 0, es) : 0;
        switch (type) {
            case BOOL -> {
                assertEquals(raw != 0, t.getBoolean(i), at);
                assertEquals(raw != 0 ? 1 : 0, s.longValue(), at);
            }
            case INT8, INT16, INT32, ENUM -> {
                long want = es == 1 ? (byte) raw : es == 2 ? (short) raw : (int) raw;
                assertEquals(want, t.getInt(i), at);
                assertEquals(want, t.getLong(i), at);
                assertEquals(want, s.longValue(), at);
            }
            case UINT8, UINT16 -> {
                assertEquals(raw, t.getInt(i), at);
                assertEquals(raw, t.getLong(i), at);
            }
            case INT64, UINT32, UINT64 -> assertEquals(raw, t.getLong(i), at);
            case FLOAT -> assertEquals((int) raw, Float.floatToRawIntBits(t.getFloat(i)), at);
            case DOUBLE -> assertEquals(raw, Double.doubleToRawLongBits(t.getDouble(i)), at);
            case STRING -> assertEquals(new String(v, StandardCharsets.UTF_8), t.getString(i), at);
            case BYTES -> assertArrayEquals(v, t.getBytes(i), at);
            case BOOL_ARRAY -> {
                boolean[] a = t.getBooleanArray(i);
                assertEquals(v.length, a.length, at);
                for (int k = 0; k < a.length; k++) {
                    assertEquals(v[k] != 0, a[k], at + "[" + k + "]");
                }
            }
            case INT8_ARRAY, UINT8_ARRAY -> assertArrayEquals(v, t.getByteArray(i), at);
            case INT16_ARRAY, UINT16_ARRAY -> {
                short[] a = t.getShortArray(i);
                assertEquals(v.length / 2, a.length, at + ": whole elements");
                for (int k = 0; k < a.length; k++) {
                    assertEquals((short) le(v, 2 * k, 2), a[k], at + "[" + k + "]");
                }
            }
            case INT32_ARRAY, UINT32_ARRAY, FLOAT_ARRAY -> {
                int n = v.length / 4;
                if (type == ParamType.FLOAT_ARRAY) {
                    float[] a = t.getFloatArray(i);
                    assertEquals(n, a.length, at + ": whole elements");
                    for (int k = 0; k < n; k++) {
                        assertEquals((int) le(v, 4 * k, 4), Float.floatToRawIntBits(a[k]), at + "[" + k + "]");
                    }
                } else {
                    int[] a = t.getIntArray(i);
                    assertEquals(n, a.length, at + ": whole elements");
                    for (int k = 0; k < n; k++) {
                        assertEquals((int) le(v, 4 * k, 4), a[k], at + "[" + k + "]");
                    }
                }
            }
            case INT64_ARRAY, UINT64_ARRAY, DOUBLE_ARRAY -> {
                int n = v.length / 8;
                if (type == ParamType.DOUBLE_ARRAY) {
                    double[] a = t.getDoubleArray(i);
                    assertEquals(n, a.length, at + ": whole elements");
                    for (int k = 0; k < n; k++) {
                        assertEquals(le(v, 8 * k, 8), Double.doubleToRawLongBits(a[k]), at + "[" + k + "]");
                    }
                } else {
                    long[] a = t.getLongArray(i);
                    assertEquals(n, a.length, at + ": whole elements");
                    for (int k = 0; k < n; k++) {
                        assertEquals(le(v, 8 * k, 8), a[k], at + "[" + k + "]");
                    }
                }
            }
            default -> fail(at + ": no check for " + type);
        }
    }
}
