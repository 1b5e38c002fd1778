package io.parambus.client;

import io.parambus.ParamType;
import io.parambus.ParambusException;
import io.parambus.Status;

import java.nio.charset.StandardCharsets;

/**
 * One parameter's value as pbusd sent it (a value record, docs/socket-protocol.md §2):
 * the value, its alarm status, the time of its write and its version. The typed
 * accessors check the parameter's type and throw {@link ParambusException}
 * {@code EINVAL} naming the parameter and both types on a mismatch. Immutable, so
 * thread-safe; the array accessors return new arrays.
 */
public final class Value {
    private final ParamInfo param;
    private final int statusCode;
    private final long timestampNs;
    private final long version;
    private final long raw;
    private final byte[] data;

    Value(ParamInfo param, int statusCode, long timestampNs, long version, long raw, byte[] data) {
        this.param = param;
        this.statusCode = statusCode;
        this.timestampNs = timestampNs;
        this.version = version;
        this.raw = raw;
        this.data = data;
    }

    /** The parameter's description from the schema. */
    public ParamInfo param() {
        return param;
    }

    /** The parameter's index. */
    public int index() {
        return param.index();
    }

    /** The parameter's name. */
    public String name() {
        return param.name();
    }

    /** The parameter's type. */
    public ParamType type() {
        return param.type();
    }

    /** The alarm status ({@link Status#INVALID} for a value never written, and for codes above 3). */
    public Status status() {
        return Status.ofCode(statusCode);
    }

    /** The status as sent (0 ok, 1 minor, 2 major, 3 invalid; a later writer may store others). */
    public int statusCode() {
        return statusCode;
    }

    /** When the value was written: CLOCK_REALTIME, nanoseconds since the epoch. */
    public long timestampNs() {
        return timestampNs;
    }

    /** The value's version: 0 for the initial value, one more with every write. */
    public long version() {
        return version;
    }

    /** The length of the value in bytes (of a string: its UTF-8 bytes; of an array: elements × size). */
    public int length() {
        return data == null ? param.type().elementSize() : data.length;
    }

    /** The value in its stored encoding (docs/segment-format.md §2.6); a new array each call. */
    public byte[] bytes() {
        if (data != null) {
            return data.clone();
        }
        byte[] b = new byte[param.type().elementSize()];
        ValueCodec.storeRaw(b, 0, b.length, raw);
        return b;
    }

    private ParambusException mismatch(String wanted) {
        return new ParambusException("EINVAL", "value of " + param.name() + ": is a " + param.type().spelling()
                + ", not a " + wanted + " (EINVAL)");
    }

    private long number() {
        return ValueCodec.rawToNumber(param.type(), raw);
    }

    /**
     * A {@code bool}.
     *
     * @throws ParambusException {@code EINVAL} if the parameter is of another type
     */
    public boolean asBoolean() {
        if (param.type() != ParamType.BOOL) {
            throw mismatch("bool");
        }
        return raw != 0;
    }

    /**
     * An {@code int8}, {@code int16}, {@code int32}, {@code uint8}, {@code uint16} or
     * {@code enum} (its number).
     *
     * @throws ParambusException {@code EINVAL} for other types ({@code uint32}: {@link #asLong()})
     */
    public int asInt() {
        return switch (param.type()) {
            case INT8, INT16, INT32, UINT8, UINT16, ENUM -> (int) number();
            default -> throw mismatch("int (int8, int16, int32, uint8, uint16 or enum)");
        };
    }

    /**
     * Any integer type or {@code enum}; a {@code uint64} as its bits (read it with
     * {@link Long#toUnsignedString(long)}).
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public long asLong() {
        ParamType t = param.type();
        if (t.isArray() || !(t.isSignedInteger() || t.isUnsignedInteger())) {
            throw mismatch("integer");
        }
        return number();
    }

    /**
     * A {@code float}.
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public float asFloat() {
        if (param.type() != ParamType.FLOAT) {
            throw mismatch("float");
        }
        return Float.intBitsToFloat((int) raw);
    }

    /**
     * Any numeric scalar as a double: {@code float} and {@code double} exactly, integers
     * converted (64-bit ones beyond 2^53 rounded), an enum as its number.
     *
     * @throws ParambusException {@code EINVAL} for bool, string, bytes and arrays
     */
    public double asDouble() {
        ParamType t = param.type();
        if (t.isArray() || t == ParamType.BOOL || t == ParamType.STRING || t == ParamType.BYTES) {
            throw mismatch("number");
        }
        return ValueCodec.numberAsDouble(t, number());
    }

    /**
     * A {@code string} (bytes that are not UTF-8, which pbusd never stores, become U+FFFD).
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public String asString() {
        if (param.type() != ParamType.STRING) {
            throw mismatch("string");
        }
        return new String(data, StandardCharsets.UTF_8);
    }

    /**
     * A {@code bytes} buffer; a new array each call.
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public byte[] asBytes() {
        if (param.type() != ParamType.BYTES) {
            throw mismatch("bytes");
        }
        return data.clone();
    }

    /**
     * An {@code enum}'s label, or {@code null} if its number has none.
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public String asEnumLabel() {
        if (param.type() != ParamType.ENUM) {
            throw mismatch("enum");
        }
        return param.enumLabel((int) number());
    }

    private void expectArray(String wanted, ParamType... types) {
        for (ParamType t : types) {
            if (param.type() == t) {
                return;
            }
        }
        throw mismatch(wanted);
    }

    private long element(int i, int size) {
        return ValueCodec.rawToNumber(param.type().element(), ValueCodec.loadRaw(data, i * size, size));
    }

    /**
     * A {@code bool[]}.
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public boolean[] asBooleanArray() {
        expectArray("bool[]", ParamType.BOOL_ARRAY);
        boolean[] a = new boolean[data.length];
        for (int i = 0; i < a.length; i++) {
            a[i] = data[i] != 0;
        }
        return a;
    }

    /**
     * An {@code int8[]} or {@code uint8[]} (uint8 elements as their bits).
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public byte[] asByteArray() {
        expectArray("int8[] or uint8[]", ParamType.INT8_ARRAY, ParamType.UINT8_ARRAY);
        return data.clone();
    }

    /**
     * An {@code int16[]} or {@code uint16[]} (uint16 elements as their bits).
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public short[] asShortArray() {
        expectArray("int16[] or uint16[]", ParamType.INT16_ARRAY, ParamType.UINT16_ARRAY);
        short[] a = new short[data.length / 2];
        for (int i = 0; i < a.length; i++) {
            a[i] = (short) element(i, 2);
        }
        return a;
    }

    /**
     * An {@code int32[]} or {@code uint32[]} (uint32 elements as their bits).
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public int[] asIntArray() {
        expectArray("int32[] or uint32[]", ParamType.INT32_ARRAY, ParamType.UINT32_ARRAY);
        int[] a = new int[data.length / 4];
        for (int i = 0; i < a.length; i++) {
            a[i] = (int) element(i, 4);
        }
        return a;
    }

    /**
     * An {@code int64[]} or {@code uint64[]} (uint64 elements as their bits).
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public long[] asLongArray() {
        expectArray("int64[] or uint64[]", ParamType.INT64_ARRAY, ParamType.UINT64_ARRAY);
        long[] a = new long[data.length / 8];
        for (int i = 0; i < a.length; i++) {
            a[i] = element(i, 8);
        }
        return a;
    }

    /**
     * A {@code float[]}.
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public float[] asFloatArray() {
        expectArray("float[]", ParamType.FLOAT_ARRAY);
        float[] a = new float[data.length / 4];
        for (int i = 0; i < a.length; i++) {
            a[i] = Float.intBitsToFloat((int) ValueCodec.loadRaw(data, 4 * i, 4));
        }
        return a;
    }

    /**
     * A {@code double[]}.
     *
     * @throws ParambusException {@code EINVAL} for other types
     */
    public double[] asDoubleArray() {
        expectArray("double[]", ParamType.DOUBLE_ARRAY);
        double[] a = new double[data.length / 8];
        for (int i = 0; i < a.length; i++) {
            a[i] = Double.longBitsToDouble(ValueCodec.loadRaw(data, 8 * i, 8));
        }
        return a;
    }

    /** The value as text, as {@code pbus get} prints it ({@link ParamInfo#format(byte[])}). */
    public String text() {
        byte[] b = data != null ? data : bytes();
        return ValueCodec.format(param, b, 0, b.length);
    }

    /** {@code name = text [status, version N]}, e.g. {@code level = 2.5 [ok, version 3]}. */
    @Override
    public String toString() {
        return param.name() + " = " + text() + " [" + status().label() + ", version " + Long.toUnsignedString(version) + "]";
    }
}
