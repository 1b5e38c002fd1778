package io.parambus;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A value with what comes with it: timestamp, status and version, filled by
 * {@link ParamTable#read(int, Sample)} and {@link ParamTable#readMany(int[], Sample[])}.
 * A reusable holder: a read overwrites every field, and allocates nothing once the
 * holder's byte buffer is as large as the parameter's value (it grows on the first read
 * of a larger parameter and is kept).
 *
 * <p>Thread-safety: none; one thread fills and reads a sample at a time.
 */
public final class Sample {
    private static final VarHandle LE_LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);

    int index = -1;
    ParamType type;
    long bits;
    long timestampNs;
    int statusCode;
    long version;
    int length;
    byte[] bytes = new byte[8];

    /** An empty sample, to be filled by a read. */
    public Sample() {
    }

    /** The buffer, grown to hold {@code size} bytes rounded up to whole 8-byte words. */
    byte[] buffer(int size) {
        int need = (size + 7) & ~7;
        if (bytes.length < need) {
            bytes = new byte[need];
        }
        return bytes;
    }

    static void putWord(byte[] buf, int offset, long word) {
        LE_LONGS.set(buf, offset, word);
    }

    /** The index of the parameter last read into this sample (-1 before the first read). */
    public int index() {
        return index;
    }

    /** The type of the parameter last read ({@code null} before the first read). */
    public ParamType type() {
        return type;
    }

    /**
     * A scalar's stored bits, zero-extended: the bits of a double or float, an integer's
     * two's complement in its width, 0 or non-zero for a bool; for strings, bytes and
     * arrays their first up-to-8 bytes, little-endian.
     */
    public long bits() {
        return bits;
    }

    /**
     * A scalar as a {@code double}: a double or float as it is, integers by value (unsigned
     * ones as unsigned), a bool as 0 or 1, an enum as its number; {@code NaN} for strings,
     * bytes and arrays.
     */
    public double doubleValue() {
        if (type == null || !isScalar(type)) {
            return Double.NaN;
        }
        return switch (type) {
            case DOUBLE -> Double.longBitsToDouble(bits);
            case FLOAT -> Float.intBitsToFloat((int) bits);
            case BOOL -> bits != 0 ? 1.0 : 0.0;
            case UINT64 -> bits >= 0 ? (double) bits : ((double) (bits >>> 1)) * 2.0 + (bits & 1);
            default -> (double) longValue();
        };
    }

    /**
     * A scalar integer, bool or enum as a {@code long}: signed types sign-extended, unsigned
     * ones zero-extended (uint64 as its bits), a bool as 0 or 1; the raw {@link #bits()} for
     * any other type.
     */
    public long longValue() {
        if (type == null) {
            return bits;
        }
        return switch (type) {
            case BOOL -> bits != 0 ? 1 : 0;
            case INT8 -> (byte) bits;
            case INT16 -> (short) bits;
            case INT32, ENUM -> (int) bits;
            default -> bits;
        };
    }

    /** A string parameter's value (invalid UTF-8 replaced by U+FFFD, §2.8); allocates the string. */
    public String stringValue() {
        return new String(bytes, 0, length, StandardCharsets.UTF_8);
    }

    /** CLOCK_REALTIME of the write, ns since the epoch. */
    public long timestampNs() {
        return timestampNs;
    }

    /** The alarm status; a stored code above 3 (§2.8) reads as {@link Status#INVALID}. */
    public Status status() {
        return Status.ofCode(statusCode);
    }

    /** The stored status's low byte, 0–255, unchanged (§2.8). */
    public int statusCode() {
        return statusCode;
    }

    /** The version (the slot's {@code seq}), unsigned: compare with {@link Long#compareUnsigned}. */
    public long version() {
        return version;
    }

    /** Bytes of the value: a scalar's size, or a string's, bytes' or array's length. */
    public int length() {
        return length;
    }

    /**
     * The value's bytes in their stored encoding, valid up to {@link #length()} (the array
     * may be longer). The sample's own buffer, overwritten by the next read into it.
     */
    public byte[] bytes() {
        return bytes;
    }

    static boolean isScalar(ParamType t) {
        return !t.isArray() && t != ParamType.STRING && t != ParamType.BYTES;
    }

    @Override
    public String toString() {
        return "Sample[index=" + index + ", version=" + Long.toUnsignedString(version) + ", status=" + statusCode
                + ", timestampNs=" + timestampNs + ", length=" + length + "]";
    }
}
