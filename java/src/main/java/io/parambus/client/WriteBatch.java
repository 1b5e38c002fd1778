package io.parambus.client;

import io.parambus.Enumerator;
import io.parambus.ParamType;
import io.parambus.ParambusException;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes to send to pbusd as one atomic batch ({@link PbusClient#batch()},
 * docs/socket-protocol.md §3.3): {@link #commit()} applies all of them, in order, or
 * none. The setters encode each value for its parameter's type and check here only what
 * the encoding needs (the Java type fits the parameter's type, an integer fits its width);
 * pbusd checks the rest — access rights, read-only, capacity, limits, enumerators — and a
 * refusal comes back as a {@link SetRefusedException} that names the parameter. Each
 * setter returns the batch, so calls chain:
 * {@code client.batch().setDouble("level", 2.5).setEnum("mode", "ON").commit()}.
 * Not thread-safe: one thread builds and commits a batch (a client may commit batches
 * from many threads at once).
 */
public final class WriteBatch {
    private final PbusClient client;
    private final Schema schema;
    private final String instance;
    private int[] indexes = new int[4];
    private byte[][] values = new byte[4][];
    private int count;

    WriteBatch(PbusClient client) {
        this(client, client.schema(), client.instance());
    }

    /** A batch for {@code schema}; {@code client} may be null for a batch that is only encoded (tests). */
    WriteBatch(PbusClient client, Schema schema, String instance) {
        this.client = client;
        this.schema = schema;
        this.instance = instance;
    }

    /** The index of write {@code k}. */
    int indexAt(int k) {
        return indexes[k];
    }

    /** The encoded value of write {@code k} (not a copy). */
    byte[] valueAt(int k) {
        return values[k];
    }

    /** The number of writes in the batch. */
    public int size() {
        return count;
    }

    /** Removes every write, to build another batch with this object. */
    public WriteBatch clear() {
        count = 0;
        return this;
    }

    private WriteBatch add(int index, byte[] value) {
        if (count == indexes.length) {
            indexes = Arrays.copyOf(indexes, 2 * count);
            values = Arrays.copyOf(values, 2 * count);
        }
        indexes[count] = index;
        values[count] = value;
        count++;
        return this;
    }

    private ParamInfo param(int index) {
        if (index < 0 || index >= schema.paramCount()) {
            throw new ParambusException("ENOENT", "set " + instance + ": no parameter " + index + " (the instance has "
                    + schema.paramCount() + ") (ENOENT)");
        }
        return schema.params().get(index);
    }

    private int indexOf(String name) {
        int i = schema.find(name);
        if (i < 0) {
            throw new ParambusException("ENOENT", "set " + instance + ": no parameter '" + name + "' (ENOENT)");
        }
        return i;
    }

    private ParamInfo typed(int index, String wanted, ParamType... types) {
        ParamInfo p = param(index);
        for (ParamType t : types) {
            if (p.type() == t) {
                return p;
            }
        }
        throw new ParambusException("EINVAL", "set " + instance + ": " + p.name() + " is a " + p.type().spelling()
                + ", not a " + wanted + " (EINVAL)");
    }

    private static byte[] scalar(ParamType element, long number) {
        byte[] b = new byte[element.elementSize()];
        ValueCodec.storeRaw(b, 0, b.length, ValueCodec.numberToRaw(element, number));
        return b;
    }

    /** Whether {@code v} fits an integer type's width (unsigned 64-bit: any bits). */
    private static boolean fits(ParamType e, long v) {
        if (e == ParamType.INT64 || e == ParamType.UINT64) {
            return true;
        }
        int bits = 8 * e.elementSize();
        if (e.isSignedInteger()) {
            return v >= -(1L << (bits - 1)) && v < (1L << (bits - 1));
        }
        return v >= 0 && v < (1L << bits);
    }

    /**
     * Writes a {@code bool}.
     *
     * @throws ParambusException {@code ENOENT} (no such parameter), {@code EINVAL} (another type)
     */
    public WriteBatch setBoolean(int index, boolean value) {
        typed(index, "bool", ParamType.BOOL);
        return add(index, new byte[] {(byte) (value ? 1 : 0)});
    }

    /** {@link #setBoolean(int, boolean)} by name. */
    public WriteBatch setBoolean(String name, boolean value) {
        return setBoolean(indexOf(name), value);
    }

    /**
     * Writes an integer parameter or an enum (its number); see {@link #setLong(int, long)}.
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (not an integer or enum),
     *         {@code ERANGE} (does not fit the type's width)
     */
    public WriteBatch setInt(int index, int value) {
        return setLong(index, value);
    }

    /** {@link #setInt(int, int)} by name. */
    public WriteBatch setInt(String name, int value) {
        return setLong(indexOf(name), value);
    }

    /**
     * Writes an integer parameter ({@code int8} … {@code uint64}) or an enum (its number);
     * a {@code uint64} takes the bits of {@code value} (so -1 is 2^64 − 1).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (not an integer or enum),
     *         {@code ERANGE} (does not fit the type's width: 300 in an int8, -1 in a uint32)
     */
    public WriteBatch setLong(int index, long value) {
        ParamInfo p = param(index);
        ParamType t = p.type();
        if (t.isArray() || !(t.isSignedInteger() || t.isUnsignedInteger())) {
            throw new ParambusException("EINVAL", "set " + instance + ": " + p.name() + " is a " + t.spelling()
                    + ", not an integer (EINVAL)");
        }
        if (!fits(t, value)) {
            throw new ParambusException("ERANGE", "set " + instance + ": " + p.name() + " = " + value
                    + ": outside the range of " + t.spelling() + " (ERANGE)");
        }
        return add(index, scalar(t, value));
    }

    /** {@link #setLong(int, long)} by name. */
    public WriteBatch setLong(String name, long value) {
        return setLong(indexOf(name), value);
    }

    /**
     * Writes a {@code float}.
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (not a float)
     */
    public WriteBatch setFloat(int index, float value) {
        typed(index, "float", ParamType.FLOAT);
        return add(index, scalar(ParamType.FLOAT, Double.doubleToRawLongBits(value)));
    }

    /** {@link #setFloat(int, float)} by name. */
    public WriteBatch setFloat(String name, float value) {
        return setFloat(indexOf(name), value);
    }

    /**
     * Writes a {@code double}, or a {@code float} (rounded to the nearest float).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (neither),
     *         {@code ERANGE} (a finite value beyond the range of float)
     */
    public WriteBatch setDouble(int index, double value) {
        ParamInfo p = typed(index, "double or float", ParamType.DOUBLE, ParamType.FLOAT);
        if (p.type() == ParamType.FLOAT && Double.isFinite(value) && Math.abs(value) > Float.MAX_VALUE) {
            throw new ParambusException("ERANGE", "set " + instance + ": " + p.name() + " = " + value
                    + ": outside the range of float (ERANGE)");
        }
        return add(index, scalar(p.type(), Double.doubleToRawLongBits(value)));
    }

    /** {@link #setDouble(int, double)} by name. */
    public WriteBatch setDouble(String name, double value) {
        return setDouble(indexOf(name), value);
    }

    /**
     * Writes a {@code string} (sent as UTF-8; pbusd refuses one above its size, {@code EMSGSIZE}).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (not a string)
     */
    public WriteBatch setString(int index, String value) {
        typed(index, "string", ParamType.STRING);
        return add(index, value.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #setString(int, String)} by name. */
    public WriteBatch setString(String name, String value) {
        return setString(indexOf(name), value);
    }

    /**
     * Writes a {@code bytes} buffer (copied).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (not bytes)
     */
    public WriteBatch setBytes(int index, byte[] value) {
        typed(index, "bytes", ParamType.BYTES);
        return add(index, value.clone());
    }

    /** {@link #setBytes(int, byte[])} by name. */
    public WriteBatch setBytes(String name, byte[] value) {
        return setBytes(indexOf(name), value);
    }

    /**
     * Writes an {@code enum} by its label (exactly as the schema spells it).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (not an enum, or no such label)
     */
    public WriteBatch setEnum(int index, String label) {
        ParamInfo p = typed(index, "enum", ParamType.ENUM);
        Integer value = Enumerator.valueOf(p.enumerators(), label, false);
        if (value != null) {
            return add(index, scalar(ParamType.ENUM, value));
        }
        throw new ParambusException("EINVAL", "set " + instance + ": " + p.name() + ": no enumerator '" + label
                + "' in " + p.enumName() + " (EINVAL)");
    }

    /** {@link #setEnum(int, String)} by name. */
    public WriteBatch setEnum(String name, String label) {
        return setEnum(indexOf(name), label);
    }

    /**
     * Writes a value given as text, as {@code pbus set} reads it ({@link ParamInfo#parse(String)}):
     * checked here against the type, capacity, limits and enumerators.
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL}, {@code ERANGE}, {@code EMSGSIZE}
     */
    public WriteBatch setText(int index, String text) {
        return add(index, param(index).parse(text));
    }

    /** {@link #setText(int, String)} by name. */
    public WriteBatch setText(String name, String text) {
        return setText(indexOf(name), text);
    }

    /**
     * Writes bytes in the stored encoding as they are (copied), to any index, unchecked:
     * for tools that have the encoding already, and for testing what pbusd refuses.
     */
    public WriteBatch setRaw(int index, byte[] stored) {
        return add(index, stored.clone());
    }

    private WriteBatch array(int index, String wanted, ParamType[] types, int length, java.util.function.IntToLongFunction element) {
        ParamInfo p = typed(index, wanted, types);
        ParamType e = p.type().element();
        int size = e.elementSize();
        byte[] b = new byte[length * size];
        for (int k = 0; k < length; k++) {
            ValueCodec.storeRaw(b, k * size, size, ValueCodec.numberToRaw(e, element.applyAsLong(k)));
        }
        return add(index, b);
    }

    /**
     * Writes a {@code bool[]}.
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setBooleanArray(int index, boolean[] value) {
        return array(index, "bool[]", new ParamType[] {ParamType.BOOL_ARRAY}, value.length, k -> value[k] ? 1 : 0);
    }

    /**
     * Writes an {@code int8[]} or {@code uint8[]} (elements as their bits).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setByteArray(int index, byte[] value) {
        return array(index, "int8[] or uint8[]", new ParamType[] {ParamType.INT8_ARRAY, ParamType.UINT8_ARRAY}, value.length,
                k -> value[k]);
    }

    /**
     * Writes an {@code int16[]} or {@code uint16[]} (elements as their bits).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setShortArray(int index, short[] value) {
        return array(index, "int16[] or uint16[]", new ParamType[] {ParamType.INT16_ARRAY, ParamType.UINT16_ARRAY},
                value.length, k -> value[k]);
    }

    /**
     * Writes an {@code int32[]} or {@code uint32[]} (elements as their bits).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setIntArray(int index, int[] value) {
        return array(index, "int32[] or uint32[]", new ParamType[] {ParamType.INT32_ARRAY, ParamType.UINT32_ARRAY},
                value.length, k -> value[k]);
    }

    /**
     * Writes an {@code int64[]} or {@code uint64[]} (elements as their bits).
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setLongArray(int index, long[] value) {
        return array(index, "int64[] or uint64[]", new ParamType[] {ParamType.INT64_ARRAY, ParamType.UINT64_ARRAY},
                value.length, k -> value[k]);
    }

    /**
     * Writes a {@code float[]}.
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setFloatArray(int index, float[] value) {
        return array(index, "float[]", new ParamType[] {ParamType.FLOAT_ARRAY}, value.length,
                k -> Double.doubleToRawLongBits(value[k]));
    }

    /**
     * Writes a {@code double[]}.
     *
     * @throws ParambusException {@code ENOENT}, {@code EINVAL} (another type)
     */
    public WriteBatch setDoubleArray(int index, double[] value) {
        return array(index, "double[]", new ParamType[] {ParamType.DOUBLE_ARRAY}, value.length,
                k -> Double.doubleToRawLongBits(value[k]));
    }

    /**
     * Sends the batch and waits for pbusd's answer: every write applied, in order, or none.
     * The batch stays as it is (it may be committed again).
     *
     * @return each write's new version, in the batch's order
     * @throws SetRefusedException if pbusd refused a write (nothing was written): the
     *         message names the first refused parameter, its value and why
     * @throws ServerErrorException pbusd's ERROR ({@code EIO}: the values were applied but
     *         could not be saved; {@code EMSGSIZE}: the batch is above max_frame)
     * @throws ParambusException {@code EINVAL} for an empty batch
     * @throws ConnectionException as every request (no connection, or lost before the reply)
     * @throws RequestTimeoutException as every request (no reply in time)
     */
    public long[] commit() {
        if (count == 0) {
            throw new ParambusException("EINVAL", "set " + instance + ": an empty batch (EINVAL)");
        }
        return client.commit(Arrays.copyOf(indexes, count), Arrays.copyOf(values, count));
    }
}
