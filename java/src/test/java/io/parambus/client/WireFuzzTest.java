package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.ParamType;
import io.parambus.fuzz.Vectors;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-wire} (tests/fuzz/run): the client's frame codec {@link Wire}
 * on one frame (docs/socket-protocol.md §2, §3). The input is the frame; its header's
 * length is set to the input's and its flags to 0 (the frame reader's checks of the
 * header are the client target's), its type chooses the decoder.
 *
 * <p>Checked, for the bodies {@link Wire} decodes (HELLO_REPLY, ERROR, SET_REPLY, and
 * the value records of VALUES and NOTIFY in the schema of the vectors,
 * tests/server/fixtures/server.pbs): it accepts exactly the bodies that a decoder
 * written here from §2–§3 accepts (every field present, nothing left over, an ERROR's
 * code a negative errno, a SET_REPLY's results not positive, a value record of a
 * parameter of the schema whose length its type can have and its capacity holds), and
 * decodes them to the same fields; a decoded value's typed accessors mean what
 * segment-format.md §2.6 says of its bytes, and its bytes are the record's. For the
 * requests the client sends (HELLO, SCHEMA_GET, GET, SET, SUBSCRIBE, UNSUBSCRIBE,
 * STATS_GET, PING), a well-formed frame decoded here and encoded again by {@link Wire}
 * is the same bytes, and {@code Wire}'s size functions give its length. The only
 * exception is {@link ProtocolErrorException}.
 *
 * <p>Seeds: every frame of tests/vectors/socket-frames.txt.
 */
class WireFuzzTest {
    private static final Schema SCHEMA = Schema.parse(Vectors.file("tests/server/fixtures/server.pbs"));
    private static final HexFormat HEX = HexFormat.of();

    static Stream<Arguments> seeds() {
        return Vectors.arguments(new ArrayList<>(Vectors.frames().values()));
    }

    /** A body read by §2's rules, independently of {@link Wire.Body}: little-endian, strict. */
    private static final class SpecBody {
        final ByteBuffer b;
        int pos;
        final int end;
        boolean bad;

        SpecBody(byte[] frame) {
            b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
            pos = Wire.HEADER;
            end = frame.length;
        }

        private boolean has(long n) {
            if (bad || end - pos < n) {
                bad = true;
                return false;
            }
            return true;
        }

        long u32() {
            if (!has(4)) {
                return 0;
            }
            long v = Integer.toUnsignedLong(b.getInt(pos));
            pos += 4;
            return v;
        }

        int i32() {
            return (int) u32();
        }

        long u64() {
            if (!has(8)) {
                return 0;
            }
            long v = b.getLong(pos);
            pos += 8;
            return v;
        }

        byte[] bytes(long n) {
            if (!has(n)) {
                return new byte[0];
            }
            byte[] v = new byte[(int) n];
            b.get(pos, v);
            pos += (int) n;
            return v;
        }

        byte[] str() {
            return bytes(u32());
        }

        boolean done() {
            return !bad && pos == end;
        }
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(10)
    void decodeFrame(byte[] input) {
        if (input.length < Wire.HEADER) {
            return;
        }
        byte[] frame = input.clone();
        ByteBuffer buf = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(0, frame.length);
        buf.putShort(6, (short) 0);
        int type = Short.toUnsignedInt(buf.getShort(4));
        int id = buf.getInt(8);
        Wire.Body body = new Wire.Body(buf, Wire.HEADER, frame.length);
        switch (type) {
            case Wire.HELLO_REPLY, Wire.ERROR, Wire.SET_REPLY, Wire.VALUES, Wire.NOTIFY -> {
                List<Object> wire;
                try {
                    wire = decode(type, body);
                } catch (ProtocolErrorException e) {
                    assertEquals("EPROTO", e.errno(), e.getMessage());
                    wire = null;
                }
                List<Object> spec = specDecode(type, frame);
                assertEquals(spec, wire, Wire.typeName(type) + ": what Wire decodes (null: malformed) against §3");
            }
            case Wire.HELLO, Wire.SCHEMA_GET, Wire.STATS_GET, Wire.GET, Wire.SET, Wire.SUBSCRIBE, Wire.UNSUBSCRIBE,
                    Wire.PING -> reencode(type, id, frame);
            default -> {
                // A type the client never decodes: the frame reader's business (ClientFuzzTest).
            }
        }
    }

    /** A body as {@link Wire} decodes it, in the field order of §3. */
    private static List<Object> decode(int type, Wire.Body body) {
        List<Object> out = new ArrayList<>();
        switch (type) {
            case Wire.HELLO_REPLY -> {
                Wire.HelloReply h = Wire.helloReply(body);
                out.addAll(List.of(h.version(), h.schemaHash(), h.paramCount(), h.maxFrame(), h.maxSubscriptions(),
                        h.serverPid(), h.instance(), h.interfaceName()));
            }
            case Wire.ERROR -> {
                Wire.ErrorReply e = Wire.error(body);
                out.addAll(List.of(e.code(), e.message()));
            }
            case Wire.SET_REPLY -> {
                Wire.SetReply r = Wire.setReply(body);
                assertEquals(r.results().length, r.seqs().length);
                out.add(r.result());
                out.add(r.results().length);
                for (int k = 0; k < r.results().length; k++) {
                    out.add(r.results()[k]);
                    out.add(r.seqs()[k]);
                }
            }
            default -> {
                if (type == Wire.NOTIFY) {
                    out.add(body.u32());
                }
                long count = body.u32() & 0xFFFFFFFFL;
                if (body.bad) {
                    throw new ProtocolErrorException("short");
                }
                out.add((int) count);
                for (long k = 0; k < count; k++) {
                    int at = body.pos;
                    Value v = Wire.value(body, SCHEMA);
                    assertTrue(body.pos > at, "a value record read nothing");
                    checkValue(v);
                    out.addAll(List.of(v.index(), v.statusCode(), v.timestampNs(), v.version(), HEX.formatHex(v.bytes())));
                }
                if (!body.done()) {
                    throw new ProtocolErrorException("left over");
                }
            }
        }
        return out;
    }

    /** A body as §3 says it reads, with the client's semantic rules; null if malformed. */
    private static List<Object> specDecode(int type, byte[] frame) {
        SpecBody r = new SpecBody(frame);
        List<Object> out = new ArrayList<>();
        switch (type) {
            case Wire.HELLO_REPLY -> {
                int version = (int) r.u32();
                long hash = r.u64();
                int count = (int) r.u32();
                long maxFrame = r.u32();
                int maxSubs = (int) r.u32();
                int pid = (int) r.u32();
                String instance = new String(r.str(), StandardCharsets.UTF_8);
                String iface = new String(r.str(), StandardCharsets.UTF_8);
                if (!r.done() || maxFrame < Wire.HEADER) {
                    return null;
                }
                out.addAll(List.of(version, hash, count, (int) maxFrame, maxSubs, pid, instance, iface));
            }
            case Wire.ERROR -> {
                int code = r.i32();
                String message = new String(r.str(), StandardCharsets.UTF_8);
                if (!r.done() || code >= 0 || code < -4095) {
                    return null;
                }
                out.addAll(List.of(code, message));
            }
            case Wire.SET_REPLY -> {
                int result = r.i32();
                long count = r.u32();
                if (r.bad || result > 0 || (long) (r.end - r.pos) != count * 12) {
                    return null;
                }
                out.add(result);
                out.add((int) count);
                for (long k = 0; k < count; k++) {
                    int writeResult = r.i32();
                    if (writeResult > 0) {
                        return null;
                    }
                    out.add(writeResult);
                    out.add(r.u64());
                }
            }
            default -> {
                if (type == Wire.NOTIFY) {
                    out.add((int) r.u32());
                }
                long count = r.u32();
                if (r.bad) {
                    return null;
                }
                out.add((int) count);
                for (long k = 0; k < count; k++) {
                    long index = r.u32();
                    int status = (int) r.u32();
                    long ts = r.u64();
                    long seq = r.u64();
                    byte[] value = r.bytes(r.u32());
                    if (r.bad || index >= SCHEMA.paramCount()) {
                        return null;
                    }
                    ParamInfo p = SCHEMA.param((int) index);
                    ParamType t = p.type();
                    boolean scalar = !t.isArray() && t != ParamType.STRING && t != ParamType.BYTES;
                    if (value.length > p.valueSize() || value.length % t.elementSize() != 0
                            || scalar && value.length != t.elementSize()) {
                        return null;
                    }
                    out.addAll(List.of((int) index, status, ts, seq, HEX.formatHex(value)));
                }
                if (!r.done()) {
                    return null;
                }
            }
        }
        return out;
    }

    private static long le(byte[] b, int off, int size) {
        long v = 0;
        for (int k = size - 1; k >= 0; k--) {
            v = v << 8 | (b[off + k] & 0xFF);
        }
        return v;
    }

    /** A decoded value's accessors against §2.6 applied to its bytes. */
    private static void checkValue(Value v) {
        ParamInfo p = v.param();
        byte[] b = v.bytes();
        assertEquals(b.length, v.length(), "length");
        assertTrue(b.length <= p.valueSize(), "above the capacity");
        int es = p.type().elementSize();
        long raw = b.length >= es ? le(b, 0, es) : 0;
        switch (p.type()) {
            case BOOL -> assertEquals(raw != 0, v.asBoolean());
            case INT8 -> assertEquals((byte) raw, v.asInt());
            case INT16 -> assertEquals((short) raw, v.asInt());
            case INT32, ENUM -> {
                assertEquals((int) raw, v.asInt());
                assertEquals((int) raw, v.asLong());
                if (p.type() == ParamType.ENUM) {
                    assertEquals(p.enumLabel((int) raw), v.asEnumLabel());
                }
            }
            case UINT8, UINT16 -> assertEquals(raw, v.asInt());
            case INT64, UINT32, UINT64 -> assertEquals(raw, v.asLong());
            case FLOAT -> assertEquals((int) raw, Float.floatToRawIntBits(v.asFloat()));
            case DOUBLE -> assertEquals(raw, Double.doubleToRawLongBits(v.asDouble()));
            case STRING -> assertEquals(new String(b, StandardCharsets.UTF_8), v.asString());
            case BYTES -> assertArrayEquals(b, v.asBytes());
            case INT32_ARRAY -> {
                int[] a = v.asIntArray();
                assertEquals(b.length / 4, a.length);
                for (int k = 0; k < a.length; k++) {
                    assertEquals((int) le(b, 4 * k, 4), a[k]);
                }
            }
            case DOUBLE_ARRAY -> {
                double[] a = v.asDoubleArray();
                assertEquals(b.length / 8, a.length);
                for (int k = 0; k < a.length; k++) {
                    assertEquals(le(b, 8 * k, 8), Double.doubleToRawLongBits(a[k]));
                }
            }
            default -> fail("the schema has no " + p.type());
        }
        // The text pbus get prints is there for every value (it throws nothing).
        assertTrue(v.toString().startsWith(p.name() + " = "));
    }

    /** A request decoded by §3 and encoded again by {@link Wire}: the same bytes. */
    private static void reencode(int type, int id, byte[] frame) {
        SpecBody r = new SpecBody(frame);
        ByteBuffer out = ByteBuffer.allocate(frame.length + 64).order(ByteOrder.LITTLE_ENDIAN);
        long size;
        switch (type) {
            case Wire.HELLO -> {
                int min = (int) r.u32();
                int max = (int) r.u32();
                long hash = r.u64();
                byte[] name = r.str();
                if (!r.done()) {
                    return;
                }
                size = Wire.helloSize(name);
                Wire.hello(out, id, min, max, hash, name);
            }
            case Wire.SCHEMA_GET, Wire.STATS_GET -> {
                if (!r.done()) {
                    return;
                }
                size = Wire.HEADER;
                Wire.empty(out, type, id);
            }
            case Wire.GET, Wire.SUBSCRIBE -> {
                int interval = type == Wire.SUBSCRIBE ? (int) r.u32() : 0;
                double deadband = type == Wire.SUBSCRIBE ? Double.longBitsToDouble(r.u64()) : 0;
                long count = r.u32();
                if (r.bad || (long) (r.end - r.pos) != 4 * count) {
                    return;
                }
                int[] indexes = new int[(int) count];
                for (int k = 0; k < count; k++) {
                    indexes[k] = (int) r.u32();
                }
                if (type == Wire.GET) {
                    size = Wire.getSize(indexes.length);
                    Wire.get(out, id, indexes);
                    if (count == 1) {
                        ByteBuffer one = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
                        Wire.getOne(one, id, indexes[0]);
                        assertArrayEquals(frame, java.util.Arrays.copyOf(one.array(), one.position()), "getOne");
                    }
                } else {
                    size = Wire.subscribeSize(indexes.length);
                    Wire.subscribe(out, id, interval, deadband, indexes);
                }
            }
            case Wire.SET -> {
                long count = r.u32();
                List<Integer> indexes = new ArrayList<>();
                List<byte[]> values = new ArrayList<>();
                for (long k = 0; k < count && !r.bad; k++) {
                    indexes.add((int) r.u32());
                    values.add(r.bytes(r.u32()));
                }
                if (!r.done()) {
                    return;
                }
                byte[][] v = values.toArray(new byte[0][]);
                size = Wire.setSize(v);
                Wire.set(out, id, indexes.stream().mapToInt(Integer::intValue).toArray(), v);
            }
            case Wire.UNSUBSCRIBE -> {
                int subscription = (int) r.u32();
                if (!r.done()) {
                    return;
                }
                size = Wire.HEADER + 4;
                Wire.u32(out, type, id, subscription);
            }
            default -> {
                byte[] data = r.bytes(r.end - r.pos);
                size = Wire.HEADER + data.length;
                Wire.bytes(out, Wire.PING, id, data);
            }
        }
        assertEquals(frame.length, size, Wire.typeName(type) + ": the size function");
        assertArrayEquals(frame, java.util.Arrays.copyOf(out.array(), out.position()),
                Wire.typeName(type) + ": decoded and encoded again");
    }
}
