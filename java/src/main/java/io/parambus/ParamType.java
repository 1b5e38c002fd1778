package io.parambus;

/**
 * A parameter's type: the type codes of the segment format (docs/segment-format.md
 * §2.6) and of the compiled schema (docs/schema-format.md). An array's code is its
 * element's with bit 7 set; {@link #isArray()} tells, {@link #element()} gives the
 * element type.
 */
public enum ParamType {
    BOOL(1, 1), INT8(2, 1), INT16(3, 2), INT32(4, 4), INT64(5, 8),
    UINT8(6, 1), UINT16(7, 2), UINT32(8, 4), UINT64(9, 8),
    FLOAT(10, 4), DOUBLE(11, 8), STRING(12, 1), BYTES(13, 1), ENUM(14, 4),
    BOOL_ARRAY(0x81, 1), INT8_ARRAY(0x82, 1), INT16_ARRAY(0x83, 2), INT32_ARRAY(0x84, 4),
    INT64_ARRAY(0x85, 8), UINT8_ARRAY(0x86, 1), UINT16_ARRAY(0x87, 2), UINT32_ARRAY(0x88, 4),
    UINT64_ARRAY(0x89, 8), FLOAT_ARRAY(0x8A, 4), DOUBLE_ARRAY(0x8B, 8);

    private static final ParamType[] BY_CODE = new ParamType[256];
    static {
        for (ParamType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;
    private final int elementSize;

    ParamType(int code, int elementSize) {
        this.code = code;
        this.elementSize = elementSize;
    }

    /** The type code as the segment and the schema store it (0x81–0x8B for arrays). */
    public int code() {
        return code;
    }

    /** The size of one scalar or array element in bytes; 1 for strings and bytes. */
    public int elementSize() {
        return elementSize;
    }

    /** Whether this is an array type (code bit 7). */
    public boolean isArray() {
        return (code & 0x80) != 0;
    }

    /** The element type of an array type; the type itself for a scalar. */
    public ParamType element() {
        return isArray() ? BY_CODE[code & 0x7F] : this;
    }

    /** Whether values are signed integers (int8 … int64, enum). */
    public boolean isSignedInteger() {
        ParamType e = element();
        return e == INT8 || e == INT16 || e == INT32 || e == INT64 || e == ENUM;
    }

    /** Whether values are unsigned integers (uint8 … uint64). */
    public boolean isUnsignedInteger() {
        ParamType e = element();
        return e == UINT8 || e == UINT16 || e == UINT32 || e == UINT64;
    }

    /** Whether values are floating point (float, double). */
    public boolean isFloating() {
        ParamType e = element();
        return e == FLOAT || e == DOUBLE;
    }

    /** The type of a code, or {@code null} if the code names none (0, 15 and above, 0x8C–0x8E …). */
    public static ParamType ofCode(int code) {
        return code >= 0 && code < 256 ? BY_CODE[code] : null;
    }

    /** The name as the schema language and the tools spell it: {@code double}, {@code uint8[]}. */
    public String spelling() {
        String base = element().name().toLowerCase(java.util.Locale.ROOT);
        return isArray() ? base + "[]" : base;
    }
}
