package io.parambus;

import static io.parambus.SegmentLayout.A;
import static io.parambus.SegmentLayout.F_HAS_MAX;
import static io.parambus.SegmentLayout.F_HAS_MIN;
import static io.parambus.SegmentLayout.F_READONLY;
import static io.parambus.SegmentLayout.T_BOOL;
import static io.parambus.SegmentLayout.T_BYTES;
import static io.parambus.SegmentLayout.T_DOUBLE;
import static io.parambus.SegmentLayout.T_ENUM;
import static io.parambus.SegmentLayout.T_FLOAT;
import static io.parambus.SegmentLayout.T_INT16;
import static io.parambus.SegmentLayout.T_INT32;
import static io.parambus.SegmentLayout.T_INT64;
import static io.parambus.SegmentLayout.T_INT8;
import static io.parambus.SegmentLayout.T_STRING;
import static io.parambus.SegmentLayout.T_UINT16;
import static io.parambus.SegmentLayout.T_UINT32;
import static io.parambus.SegmentLayout.T_UINT64;
import static io.parambus.SegmentLayout.T_UINT8;

import io.parambus.ParamTable.Access;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Every check a write must pass before anything is written, as the C library checks
 * (docs/segment-format.md §2.6): the parameter's type, the table's access (read-only
 * parameters: providers only), the value's length, a bool's byte, an enum's membership,
 * a number's range and limits (signed, unsigned or floating point by type; NaN is outside
 * any limit); and each value's stored encoding. A refusal is a {@link ParambusException}
 * ({@code EINVAL}, {@code ERANGE}, {@code EMSGSIZE}, {@code EACCES}, {@code ENOENT}) with a
 * one-line message. The scalar checks allocate nothing.
 *
 * <p>Thread-safety: immutable; any thread.
 */
final class ValueChecks {
    private final ParamTable table;
    private final int[] type, flags, valueSize;
    private final long[] min, max, valueMask;
    private final int[][] enumValues;
    private final Access access;

    ValueChecks(ParamTable table) {
        this.table = table;
        this.type = table.type;
        this.flags = table.flags;
        this.valueSize = table.valueSize;
        this.min = table.min;
        this.max = table.max;
        this.valueMask = table.valueMask;
        this.enumValues = table.enumValues;
        this.access = table.access;
    }

    private String obj(int i) {
        return table.obj(i);
    }

    /** A type's bit in a set of types (codes 1-14 and arrays 0x81-0x8B fit 32 bits). */
    private static int bit(int code) {
        return 1 << ((code & 0x7F) + ((code & 0x80) != 0 ? 16 : 0));
    }

    private static final int INTS = bit(T_INT8) | bit(T_INT16) | bit(T_INT32) | bit(T_UINT8) | bit(T_UINT16)
            | bit(T_ENUM);
    private static final int LONGS = INTS | bit(T_INT64) | bit(T_UINT32) | bit(T_UINT64);

    /** Index, type (one of the set {@code types}) and access of a write: its first checks. */
    private void checkWrite(String op, int i, int types) {
        table.checkIndex(op, i);
        int t = type[i];
        if ((bit(t) & types) == 0) {
            StringBuilder b = new StringBuilder();
            for (ParamType p : ParamType.values()) {
                if ((bit(p.code()) & types) != 0) {
                    b.append(b.length() == 0 ? "" : ", ").append(p.spelling());
                }
            }
            throw table.typeError(op, i, b.toString());
        }
        if (access == Access.READ) {
            throw new ParambusException("EACCES", op + " " + obj(i) + ": EACCES: the table was opened for reading");
        }
        if ((flags[i] & F_READONLY) != 0 && access != Access.PROVIDER) {
            throw new ParambusException("EACCES", op + " " + obj(i) + ": EACCES: the parameter is read-only (only a"
                    + " table opened as PROVIDER writes it)");
        }
    }

    private ParambusException outside(String op, int i, String value) {
        return new ParambusException("ERANGE", op + " " + obj(i) + ": ERANGE: " + value + " is outside the limits"
                + limitsText(i));
    }

    private String limitsText(int i) {
        ParamType t = ParamType.ofCode(type[i]).element();
        String lo = "-", hi = "-";
        if ((flags[i] & F_HAS_MIN) != 0) {
            lo = t.isFloating() ? Double.toString(Double.longBitsToDouble(min[i]))
                    : t.isUnsignedInteger() ? Long.toUnsignedString(min[i]) : Long.toString(min[i]);
        }
        if ((flags[i] & F_HAS_MAX) != 0) {
            hi = t.isFloating() ? Double.toString(Double.longBitsToDouble(max[i]))
                    : t.isUnsignedInteger() ? Long.toUnsignedString(max[i]) : Long.toString(max[i]);
        }
        return " [" + lo + ", " + hi + "]";
    }

    private void checkSigned(String op, int i, long v) {
        int f = flags[i];
        if (((f & F_HAS_MIN) != 0 && v < min[i]) || ((f & F_HAS_MAX) != 0 && v > max[i])) {
            throw outside(op, i, Long.toString(v));
        }
    }

    private void checkUnsigned(String op, int i, long v) {
        int f = flags[i];
        if (((f & F_HAS_MIN) != 0 && Long.compareUnsigned(v, min[i]) < 0)
                || ((f & F_HAS_MAX) != 0 && Long.compareUnsigned(v, max[i]) > 0)) {
            throw outside(op, i, Long.toUnsignedString(v));
        }
    }

    private void checkFloating(String op, int i, double v) {
        int f = flags[i];
        boolean hasMin = (f & F_HAS_MIN) != 0, hasMax = (f & F_HAS_MAX) != 0;
        if ((hasMin || hasMax) && Double.isNaN(v)) {
            throw outside(op, i, "NaN");
        }
        if ((hasMin && v < Double.longBitsToDouble(min[i])) || (hasMax && v > Double.longBitsToDouble(max[i]))) {
            throw outside(op, i, Double.toString(v));
        }
    }

    /** An integer (as a long; uint64 as its bits) checked for the type's range, enum membership and limits. */
    private long checkInteger(String op, int i, int elementType, long v) {
        long lo, hi;
        boolean unsigned = false;
        switch (elementType) {
            case T_INT8 -> { lo = Byte.MIN_VALUE; hi = Byte.MAX_VALUE; }
            case T_INT16 -> { lo = Short.MIN_VALUE; hi = Short.MAX_VALUE; }
            case T_INT32, T_ENUM -> { lo = Integer.MIN_VALUE; hi = Integer.MAX_VALUE; }
            case T_INT64 -> { lo = Long.MIN_VALUE; hi = Long.MAX_VALUE; }
            case T_UINT8 -> { lo = 0; hi = 0xFF; unsigned = true; }
            case T_UINT16 -> { lo = 0; hi = 0xFFFF; unsigned = true; }
            case T_UINT32 -> { lo = 0; hi = 0xFFFFFFFFL; unsigned = true; }
            default -> { lo = Long.MIN_VALUE; hi = Long.MAX_VALUE; unsigned = true; }
        }
        if (elementType != T_UINT64 && (v < lo || v > hi)) {
            throw new ParambusException("ERANGE", op + " " + obj(i) + ": ERANGE: " + v + " does not fit "
                    + ParamType.ofCode(elementType).spelling());
        }
        if (elementType == T_ENUM && !isEnumerator(i, (int) v)) {
            throw new ParambusException("ERANGE", op + " " + obj(i) + ": ERANGE: " + v + " is no enumerator of "
                    + table.params[i].enumName());
        }
        if (unsigned) {
            checkUnsigned(op, i, v);
        } else {
            checkSigned(op, i, v);
        }
        return v;
    }

    private boolean isEnumerator(int i, int v) {
        for (int e : enumValues[i]) {
            if (e == v) {
                return true;
            }
        }
        return false;
    }

    /** The stored bits of a checked bool write. */
    long encodeBoolean(String op, int i, boolean v) {
        checkWrite(op, i, bit(T_BOOL));
        return v ? 1 : 0;
    }

    /** The stored bits of a checked integer write through setInt. */
    long encodeInt(String op, int i, int v) {
        checkWrite(op, i, INTS);
        return checkInteger(op, i, type[i], v) & valueMask[i];
    }

    /** The stored bits of a checked integer write through setLong. */
    long encodeLong(String op, int i, long v) {
        checkWrite(op, i, LONGS);
        return checkInteger(op, i, type[i], v) & valueMask[i];
    }

    /** The stored bits of a checked float write. */
    long encodeFloat(String op, int i, float v) {
        checkWrite(op, i, bit(T_FLOAT));
        checkFloating(op, i, v);
        return Integer.toUnsignedLong(Float.floatToRawIntBits(v));
    }

    /** The stored bits of a checked double write. */
    long encodeDouble(String op, int i, double v) {
        checkWrite(op, i, bit(T_DOUBLE));
        checkFloating(op, i, v);
        return Double.doubleToRawLongBits(v);
    }

    private void checkLength(String op, int i, long length) {
        if (length > valueSize[i]) {
            throw new ParambusException("EMSGSIZE", op + " " + obj(i) + ": EMSGSIZE: " + length + " bytes, the"
                    + " parameter holds at most " + valueSize[i]);
        }
    }

    /** The stored bytes of a checked string write (strict UTF-8, no NUL). */
    byte[] encodeString(String op, int i, String v) {
        checkWrite(op, i, bit(T_STRING));
        Objects.requireNonNull(v, "value");
        byte[] bytes;
        try {
            ByteBuffer b = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).encode(CharBuffer.wrap(v));
            bytes = new byte[b.remaining()];
            b.get(bytes);
        } catch (CharacterCodingException e) {
            throw new ParambusException("EINVAL", op + " " + obj(i) + ": EINVAL: the text is not valid Unicode (an"
                    + " unpaired surrogate)");
        }
        if (v.indexOf('\0') >= 0) {
            throw new ParambusException("EINVAL", op + " " + obj(i) + ": EINVAL: the text holds a NUL character");
        }
        checkLength(op, i, bytes.length);
        return bytes;
    }

    /** The stored bytes of a checked bytes write (a copy). */
    byte[] encodeBytes(String op, int i, byte[] v) {
        checkWrite(op, i, bit(T_BYTES));
        checkLength(op, i, v.length);
        return v.clone();
    }

    byte[] encodeBooleanArray(String op, int i, boolean[] v) {
        checkWrite(op, i, bit(A | T_BOOL));
        checkLength(op, i, v.length);
        byte[] r = new byte[v.length];
        for (int k = 0; k < v.length; k++) {
            r[k] = (byte) (v[k] ? 1 : 0);
        }
        return r;
    }

    byte[] encodeByteArray(String op, int i, byte[] v) {
        checkWrite(op, i, bit(A | T_INT8) | bit(A | T_UINT8));
        checkLength(op, i, v.length);
        boolean unsigned = type[i] == (A | T_UINT8);
        for (byte e : v) {
            if (unsigned) {
                checkUnsigned(op, i, Byte.toUnsignedLong(e));
            } else {
                checkSigned(op, i, e);
            }
        }
        return v.clone();
    }

    byte[] encodeShortArray(String op, int i, short[] v) {
        checkWrite(op, i, bit(A | T_INT16) | bit(A | T_UINT16));
        checkLength(op, i, 2L * v.length);
        boolean unsigned = type[i] == (A | T_UINT16);
        ByteBuffer b = ByteBuffer.allocate(2 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (short e : v) {
            if (unsigned) {
                checkUnsigned(op, i, Short.toUnsignedLong(e));
            } else {
                checkSigned(op, i, e);
            }
            b.putShort(e);
        }
        return b.array();
    }

    byte[] encodeIntArray(String op, int i, int[] v) {
        checkWrite(op, i, bit(A | T_INT32) | bit(A | T_UINT32));
        checkLength(op, i, 4L * v.length);
        boolean unsigned = type[i] == (A | T_UINT32);
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int e : v) {
            if (unsigned) {
                checkUnsigned(op, i, Integer.toUnsignedLong(e));
            } else {
                checkSigned(op, i, e);
            }
            b.putInt(e);
        }
        return b.array();
    }

    byte[] encodeLongArray(String op, int i, long[] v) {
        checkWrite(op, i, bit(A | T_INT64) | bit(A | T_UINT64));
        checkLength(op, i, 8L * v.length);
        boolean unsigned = type[i] == (A | T_UINT64);
        ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (long e : v) {
            if (unsigned) {
                checkUnsigned(op, i, e);
            } else {
                checkSigned(op, i, e);
            }
            b.putLong(e);
        }
        return b.array();
    }

    byte[] encodeFloatArray(String op, int i, float[] v) {
        checkWrite(op, i, bit(A | T_FLOAT));
        checkLength(op, i, 4L * v.length);
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (float e : v) {
            checkFloating(op, i, e);
            b.putInt(Float.floatToRawIntBits(e));
        }
        return b.array();
    }

    byte[] encodeDoubleArray(String op, int i, double[] v) {
        checkWrite(op, i, bit(A | T_DOUBLE));
        checkLength(op, i, 8L * v.length);
        ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (double e : v) {
            checkFloating(op, i, e);
            b.putLong(Double.doubleToRawLongBits(e));
        }
        return b.array();
    }
}
