package io.parambus.client;

import io.parambus.ParamType;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The frames of the socket protocol (docs/socket-protocol.md §2, §3): the one place where
 * the Java client encodes and decodes them, as lib/protocol.c is for C. Frames are
 * little-endian; a frame is a 12-byte header (length, type, flags, id) and a body.
 * Encoders write a whole frame at a buffer's position (the caller makes room: each
 * {@code *Size} method tells how much); decoders read a body through a {@link Body},
 * which marks itself bad instead of reading past the end. Stateless: any thread.
 */
final class Wire {
    static final int HEADER = 12;
    static final int VERSION = 1;
    static final int NAME_MAX = 64;
    /** The client's bound on the frames it reads before HELLO_REPLY says the server's. */
    static final int MAX_FRAME_LIMIT = 64 << 20;
    static final int VALUE_RECORD = 28;

    static final int HELLO = 1;
    static final int HELLO_REPLY = 2;
    static final int SCHEMA_GET = 3;
    static final int SCHEMA = 4;
    static final int GET = 5;
    static final int VALUES = 6;
    static final int SET = 7;
    static final int SET_REPLY = 8;
    static final int SUBSCRIBE = 9;
    static final int SUBSCRIBED = 10;
    static final int UNSUBSCRIBE = 11;
    static final int UNSUBSCRIBED = 12;
    static final int NOTIFY = 13;
    static final int STATS_GET = 14;
    static final int STATS = 15;
    static final int ERROR = 16;
    static final int PING = 17;
    static final int PONG = 18;
    static final int SERVICE = 24;

    private static final String[] NAMES = {null, "HELLO", "HELLO_REPLY", "SCHEMA_GET", "SCHEMA", "GET", "VALUES", "SET",
        "SET_REPLY", "SUBSCRIBE", "SUBSCRIBED", "UNSUBSCRIBE", "UNSUBSCRIBED", "NOTIFY", "STATS_GET", "STATS", "ERROR",
        "PING", "PONG", "SERVICE_REGISTER", "SERVICE_REGISTERED", "SERVICE_UNREGISTER", "SERVICE_UNREGISTERED",
        "SERVICE_LOOKUP", "SERVICE", "SERVICE_UNWATCH", "SERVICE_UNWATCHED"};

    private Wire() {
    }

    /** A message type's name ({@code GET}), or {@code type N}. */
    static String typeName(int type) {
        return type > 0 && type < NAMES.length ? NAMES[type] : "type " + type;
    }

    // ---- Encoding ---------------------------------------------------------------------------------------

    static void header(ByteBuffer b, int length, int type, int id) {
        b.putInt(length).putShort((short) type).putShort((short) 0).putInt(id);
    }

    static int helloSize(byte[] name) {
        return HEADER + 20 + name.length;
    }

    /** HELLO: versions {@code min … max}, the schema hash (0: any) and the client's name (≤ 64 bytes of UTF-8). */
    static void hello(ByteBuffer b, int id, int minVersion, int maxVersion, long schemaHash, byte[] name) {
        header(b, helloSize(name), HELLO, id);
        b.putInt(minVersion).putInt(maxVersion).putLong(schemaHash).putInt(name.length).put(name);
    }

    /** A frame without body (SCHEMA_GET, STATS_GET). */
    static void empty(ByteBuffer b, int type, int id) {
        header(b, HEADER, type, id);
    }

    /** A frame whose body is one u32 (UNSUBSCRIBE). */
    static void u32(ByteBuffer b, int type, int id, int value) {
        header(b, HEADER + 4, type, id);
        b.putInt(value);
    }

    static int getSize(int count) {
        return HEADER + 4 + 4 * count;
    }

    /** GET of one index: the request of a single-parameter get, 20 bytes. */
    static void getOne(ByteBuffer b, int id, int index) {
        header(b, HEADER + 8, GET, id);
        b.putInt(1).putInt(index);
    }

    /** GET of {@code indexes}, in that order. */
    static void get(ByteBuffer b, int id, int[] indexes) {
        header(b, getSize(indexes.length), GET, id);
        b.putInt(indexes.length);
        for (int i : indexes) {
            b.putInt(i);
        }
    }

    static long setSize(byte[][] values) {
        long n = HEADER + 4;
        for (byte[] v : values) {
            n += 8 + v.length;
        }
        return n;
    }

    /** SET: the writes {@code (indexes[k], values[k])} as one batch. */
    static void set(ByteBuffer b, int id, int[] indexes, byte[][] values) {
        header(b, (int) setSize(values), SET, id);
        b.putInt(indexes.length);
        for (int k = 0; k < indexes.length; k++) {
            b.putInt(indexes[k]).putInt(values[k].length).put(values[k]);
        }
    }

    static int subscribeSize(int count) {
        return HEADER + 16 + 4 * count;
    }

    /** SUBSCRIBE: at most one NOTIFY per {@code minIntervalUs} (an unsigned u32), the deadband, the indexes. */
    static void subscribe(ByteBuffer b, int id, int minIntervalUs, double deadband, int[] indexes) {
        header(b, subscribeSize(indexes.length), SUBSCRIBE, id);
        b.putInt(minIntervalUs).putDouble(deadband).putInt(indexes.length);
        for (int i : indexes) {
            b.putInt(i);
        }
    }

    /** A frame whose body is any bytes (PING). */
    static void bytes(ByteBuffer b, int type, int id, byte[] data) {
        header(b, HEADER + data.length, type, id);
        b.put(data);
    }

    // ---- Decoding -------------------------------------------------------------------------------------------

    /** A body being read: absolute reads from {@code pos} to {@code end} of a little-endian buffer. */
    static final class Body {
        ByteBuffer buf;
        int pos;
        int end;
        boolean bad;

        Body(ByteBuffer buf, int pos, int end) {
            reset(buf, pos, end);
        }

        /** This body object, made to read {@code buf} from {@code pos} to {@code end} (a reader reuses one). */
        Body reset(ByteBuffer buf, int pos, int end) {
            this.buf = buf;
            this.pos = pos;
            this.end = end;
            this.bad = false;
            return this;
        }

        private boolean take(int n) {
            if (bad || end - pos < n) {
                bad = true;
                return false;
            }
            return true;
        }

        int u32() {
            if (!take(4)) {
                return 0;
            }
            int v = buf.getInt(pos);
            pos += 4;
            return v;
        }

        long u64() {
            if (!take(8)) {
                return 0;
            }
            long v = buf.getLong(pos);
            pos += 8;
            return v;
        }

        double f64() {
            return Double.longBitsToDouble(u64());
        }

        byte[] bytes(long n) {
            if (n < 0 || n > Integer.MAX_VALUE || !take((int) n)) {
                bad = true;
                return new byte[0];
            }
            byte[] b = new byte[(int) n];
            buf.get(pos, b);
            pos += (int) n;
            return b;
        }

        /** A {@code str}: u32 length and that many bytes (kept as bytes: UTF-8 is checked by the caller). */
        byte[] strBytes() {
            return bytes(u32() & 0xFFFFFFFFL);
        }

        String str() {
            return new String(strBytes(), StandardCharsets.UTF_8);
        }

        int left() {
            return end - pos;
        }

        /** Whether the body was read exactly: nothing missing, nothing left over. */
        boolean done() {
            return !bad && pos == end;
        }
    }

    /** HELLO_REPLY's fields. */
    record HelloReply(int version, long schemaHash, int paramCount, int maxFrame, int maxSubscriptions, int serverPid,
            String instance, String interfaceName) {
    }

    static HelloReply helloReply(Body r) {
        HelloReply h = new HelloReply(r.u32(), r.u64(), r.u32(), r.u32(), r.u32(), r.u32(), r.str(), r.str());
        if (!r.done() || Integer.compareUnsigned(h.maxFrame(), HEADER) < 0) {
            throw new ProtocolErrorException("malformed HELLO_REPLY");
        }
        return h;
    }

    /** ERROR's fields. */
    record ErrorReply(int code, String message) {
    }

    static ErrorReply error(Body r) {
        int code = r.u32();
        byte[] message = r.strBytes();
        if (!r.done() || code >= 0 || code < -4095) {
            throw new ProtocolErrorException("malformed ERROR" + (r.done() ? ": code " + code + " is not a negative errno" : ""));
        }
        return new ErrorReply(code, new String(message, StandardCharsets.UTF_8));
    }

    /** SET_REPLY's fields: the batch's result and each write's result and version. */
    record SetReply(int result, int[] results, long[] seqs) {
    }

    static SetReply setReply(Body r) {
        int result = r.u32();
        long count = r.u32() & 0xFFFFFFFFL;
        if (r.bad || result > 0 || r.left() != count * 12) {
            throw new ProtocolErrorException("malformed SET_REPLY");
        }
        int[] results = new int[(int) count];
        long[] seqs = new long[(int) count];
        for (int k = 0; k < count; k++) {
            results[k] = r.u32();
            seqs[k] = r.u64();
            if (results[k] > 0) {
                throw new ProtocolErrorException("malformed SET_REPLY: write " + k + "'s result " + results[k]
                        + " is not 0 or a negative errno");
            }
        }
        return new SetReply(result, results, seqs);
    }

    /**
     * One value record (§2) of a parameter of {@code schema}, decoded into a {@link Value}.
     * A record of an index outside the schema, or a value longer than the parameter's
     * capacity or of a length its type cannot have, is a protocol error.
     */
    static Value value(Body r, Schema schema) {
        int index = r.u32();
        int status = r.u32();
        long timestamp = r.u64();
        long seq = r.u64();
        long length = r.u32() & 0xFFFFFFFFL;
        if (r.bad || r.left() < length) {
            throw new ProtocolErrorException("malformed value record");
        }
        if (index < 0 || index >= schema.paramCount()) {
            throw new ProtocolErrorException("value record of parameter " + Integer.toUnsignedString(index)
                    + " (the schema has " + schema.paramCount() + ")");
        }
        ParamInfo p = schema.params().get(index);
        ParamType t = p.type();
        int esize = t.elementSize();
        if (length > p.valueSize() || (!t.isArray() && t != ParamType.STRING && t != ParamType.BYTES && length != esize)
                || length % esize != 0) {
            throw new ProtocolErrorException("value record of " + p.name() + " (" + t.spelling() + ") with " + length + " bytes");
        }
        int at = r.pos;
        r.pos += (int) length;
        if (t.isArray() || t == ParamType.STRING || t == ParamType.BYTES) {
            byte[] data = new byte[(int) length];
            r.buf.get(at, data);
            return new Value(p, status, timestamp, seq, 0, data);
        }
        long raw = switch (esize) {
            case 1 -> r.buf.get(at) & 0xFFL;
            case 2 -> r.buf.getShort(at) & 0xFFFFL;
            case 4 -> r.buf.getInt(at) & 0xFFFFFFFFL;
            default -> r.buf.getLong(at);
        };
        return new Value(p, status, timestamp, seq, raw, null);
    }
}
