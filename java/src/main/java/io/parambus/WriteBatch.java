package io.parambus;

import java.util.Arrays;
import java.util.Objects;

/**
 * Writes to one table that happen all or none (docs/segment-format.md §4.2):
 * {@code table.batch().setDouble(volts, 3.3).setInt(mode, 1).commit()}. Each setter checks
 * its write at once, as the table's own setter does (type, access, limits, enumerator,
 * length), and throws without adding it; {@link #commit()} then claims every parameter
 * before it writes the first, so that a parameter held by a stopped writer leaves
 * everything unwritten. A parameter may come more than once; its writes happen in order.
 * Each value changes atomically; readers may see the batch half published.
 *
 * <p>{@link #status(Status)} and {@link #timestamp(long)} set the status and timestamp of
 * the writes added after them (default: ok, and the commit's one clock reading).
 *
 * <p>Thread-safety: one thread at a time; {@link #commit()} must run on a platform thread
 * (see {@link ParamTable}).
 */
public final class WriteBatch {
    private final ParamTable table;
    int size;
    int[] index = new int[8];
    long[] bits = new long[8];
    byte[][] stored = new byte[8][];
    int[] status = new int[8];
    long[] timestamp = new long[8];
    private int nextStatus;
    private long nextTimestamp;

    WriteBatch(ParamTable table) {
        this.table = table;
    }

    private WriteBatch add(int i, long b, byte[] s) {
        if (size == index.length) {
            int n = size * 2;
            index = Arrays.copyOf(index, n);
            bits = Arrays.copyOf(bits, n);
            stored = Arrays.copyOf(stored, n);
            status = Arrays.copyOf(status, n);
            timestamp = Arrays.copyOf(timestamp, n);
        }
        index[size] = i;
        bits[size] = b;
        stored[size] = s;
        status[size] = nextStatus;
        timestamp[size] = nextTimestamp;
        size++;
        return this;
    }

    /** The status stored with the writes added after this call (initially {@link Status#OK}). */
    public WriteBatch status(Status s) {
        nextStatus = Objects.requireNonNull(s, "status").code();
        return this;
    }

    /**
     * The timestamp (CLOCK_REALTIME ns since the epoch) of the writes added after this call;
     * 0, the initial value, means the commit's own clock reading.
     */
    public WriteBatch timestamp(long timestampNs) {
        nextTimestamp = timestampNs;
        return this;
    }

    /** How many writes the batch holds. */
    public int size() {
        return size;
    }

    /** Add a bool write; throws as {@link ParamTable#setBoolean(int, boolean)} does, without adding it. */
    public WriteBatch setBoolean(int index, boolean value) {
        return add(index, table.checks.encodeBoolean("batch setBoolean", index, value), null);
    }

    /** Add an integer or enum write; throws as {@link ParamTable#setInt(int, int)} does, without adding it. */
    public WriteBatch setInt(int index, int value) {
        return add(index, table.checks.encodeInt("batch setInt", index, value), null);
    }

    /** Add an integer or enum write; throws as {@link ParamTable#setLong(int, long)} does, without adding it. */
    public WriteBatch setLong(int index, long value) {
        return add(index, table.checks.encodeLong("batch setLong", index, value), null);
    }

    /** Add a float write; throws as {@link ParamTable#setFloat(int, float)} does, without adding it. */
    public WriteBatch setFloat(int index, float value) {
        return add(index, table.checks.encodeFloat("batch setFloat", index, value), null);
    }

    /** Add a double write; throws as {@link ParamTable#setDouble(int, double)} does, without adding it. */
    public WriteBatch setDouble(int index, double value) {
        return add(index, table.checks.encodeDouble("batch setDouble", index, value), null);
    }

    /** Add a string write; throws as {@link ParamTable#setString(int, String)} does, without adding it. */
    public WriteBatch setString(int index, String value) {
        return add(index, 0, table.checks.encodeString("batch setString", index, value));
    }

    /** Add a bytes write; throws as {@link ParamTable#setBytes(int, byte[])} does, without adding it. */
    public WriteBatch setBytes(int index, byte[] value) {
        return add(index, 0, table.checks.encodeBytes("batch setBytes", index, value));
    }

    /** Add a bool[] write; throws as {@link ParamTable#setBooleanArray} does, without adding it. */
    public WriteBatch setBooleanArray(int index, boolean[] value) {
        return add(index, 0, table.checks.encodeBooleanArray("batch setBooleanArray", index, value));
    }

    /** Add an int8[]/uint8[] write; throws as {@link ParamTable#setByteArray} does, without adding it. */
    public WriteBatch setByteArray(int index, byte[] value) {
        return add(index, 0, table.checks.encodeByteArray("batch setByteArray", index, value));
    }

    /** Add an int16[]/uint16[] write; throws as {@link ParamTable#setShortArray} does, without adding it. */
    public WriteBatch setShortArray(int index, short[] value) {
        return add(index, 0, table.checks.encodeShortArray("batch setShortArray", index, value));
    }

    /** Add an int32[]/uint32[] write; throws as {@link ParamTable#setIntArray} does, without adding it. */
    public WriteBatch setIntArray(int index, int[] value) {
        return add(index, 0, table.checks.encodeIntArray("batch setIntArray", index, value));
    }

    /** Add an int64[]/uint64[] write; throws as {@link ParamTable#setLongArray} does, without adding it. */
    public WriteBatch setLongArray(int index, long[] value) {
        return add(index, 0, table.checks.encodeLongArray("batch setLongArray", index, value));
    }

    /** Add a float[] write; throws as {@link ParamTable#setFloatArray} does, without adding it. */
    public WriteBatch setFloatArray(int index, float[] value) {
        return add(index, 0, table.checks.encodeFloatArray("batch setFloatArray", index, value));
    }

    /** Add a double[] write; throws as {@link ParamTable#setDoubleArray} does, without adding it. */
    public WriteBatch setDoubleArray(int index, double[] value) {
        return add(index, 0, table.checks.encodeDoubleArray("batch setDoubleArray", index, value));
    }

    /**
     * Write every value, or none: claims in ascending parameter index, then writes, then
     * lets go. The batch is emptied afterwards (also on failure) and may be reused; its
     * status and timestamp settings stay.
     *
     * @throws ParambusException {@code EPERM} on a virtual thread; {@code ESTALE} the
     *     instance closed or was replaced; {@code EBUSY} a stopped writer held a parameter
     *     for a second. Nothing is written on any of them.
     */
    public void commit() {
        try {
            table.writer.commit(this);
        } finally {
            Arrays.fill(stored, 0, size, null);
            size = 0;
        }
    }
}
