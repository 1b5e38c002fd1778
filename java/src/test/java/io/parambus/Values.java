package io.parambus;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Values as the vector files write them, from the table's typed getters, and text for the writers. */
final class Values {
    private Values() {
    }

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    static BigInteger unsigned(long v) {
        BigInteger b = BigInteger.valueOf(v);
        return v < 0 ? b.add(TWO_64) : b;
    }

    /**
     * Parameter {@code i}'s value through the typed getters, in the form of
     * {@link Expected#literal}: Boolean, BigInteger, Double, String (text, bytes as hex,
     * an enum's label), or a List of them.
     */
    static Object read(ParamTable t, int i) {
        Param p = t.param(i);
        ParamType type = p.type();
        switch (type) {
            case BOOL: return t.getBoolean(i);
            case INT8: case INT16: case INT32: case INT64: return BigInteger.valueOf(t.getLong(i));
            case UINT8: case UINT16: case UINT32: case UINT64: return unsigned(t.getLong(i));
            case FLOAT: return (double) t.getFloat(i);
            case DOUBLE: return t.getDouble(i);
            case STRING: return t.getString(i);
            case BYTES: return HexFormat.of().formatHex(t.getBytes(i));
            case ENUM: {
                int v = t.getInt(i);
                String label = p.label(v);
                return label != null ? label : BigInteger.valueOf(v);
            }
            default: break;
        }
        List<Object> out = new ArrayList<>();
        switch (type) {
            case BOOL_ARRAY -> { for (boolean b : t.getBooleanArray(i)) out.add(b); }
            case INT8_ARRAY -> { for (byte b : t.getByteArray(i)) out.add(BigInteger.valueOf(b)); }
            case UINT8_ARRAY -> { for (byte b : t.getByteArray(i)) out.add(BigInteger.valueOf(Byte.toUnsignedInt(b))); }
            case INT16_ARRAY -> { for (short b : t.getShortArray(i)) out.add(BigInteger.valueOf(b)); }
            case UINT16_ARRAY -> { for (short b : t.getShortArray(i)) out.add(BigInteger.valueOf(Short.toUnsignedInt(b))); }
            case INT32_ARRAY -> { for (int b : t.getIntArray(i)) out.add(BigInteger.valueOf(b)); }
            case UINT32_ARRAY -> { for (int b : t.getIntArray(i)) out.add(BigInteger.valueOf(Integer.toUnsignedLong(b))); }
            case INT64_ARRAY -> { for (long b : t.getLongArray(i)) out.add(BigInteger.valueOf(b)); }
            case UINT64_ARRAY -> { for (long b : t.getLongArray(i)) out.add(unsigned(b)); }
            case FLOAT_ARRAY -> { for (float b : t.getFloatArray(i)) out.add((double) b); }
            case DOUBLE_ARRAY -> { for (double b : t.getDoubleArray(i)) out.add(b); }
            default -> throw new IllegalArgumentException("no getter for " + type);
        }
        return out;
    }

    /** Whether a value from {@link #read} equals a literal (NaN equals NaN; -0.0 differs from 0.0). */
    static boolean same(Object got, Object want) {
        if (got instanceof List<?> a && want instanceof List<?> b) {
            if (a.size() != b.size()) {
                return false;
            }
            for (int k = 0; k < a.size(); k++) {
                if (!same(a.get(k), b.get(k))) {
                    return false;
                }
            }
            return true;
        }
        if (got instanceof Double && want instanceof BigInteger bi) {
            return got.equals(bi.doubleValue());
        }
        return got.equals(want);
    }

    /** Add a write of {@code text} (the C library's text of a value, as pbus set takes it) to a batch. */
    static void addText(WriteBatch b, Param p, String text) {
        int i = p.index();
        switch (p.type()) {
            case BOOL -> b.setBoolean(i, text.equals("true") || text.equals("1") || text.equals("on"));
            case INT8, INT16, INT32, UINT8, UINT16 -> b.setInt(i, Integer.parseInt(text));
            case INT64, UINT32 -> b.setLong(i, Long.parseLong(text));
            case UINT64 -> b.setLong(i, Long.parseUnsignedLong(text));
            case FLOAT -> b.setFloat(i, Float.parseFloat(text));
            case DOUBLE -> b.setDouble(i, Double.parseDouble(text));
            case STRING -> b.setString(i, text);
            case BYTES -> b.setBytes(i, HexFormat.of().parseHex(text));
            case ENUM -> b.setInt(i, text.matches("-?[0-9]+") ? Integer.parseInt(text) : p.valueOf(text));
            case FLOAT_ARRAY -> {
                String[] e = text.isEmpty() ? new String[0] : text.split(",");
                float[] v = new float[e.length];
                for (int k = 0; k < e.length; k++) {
                    v[k] = Float.parseFloat(e[k]);
                }
                b.setFloatArray(i, v);
            }
            case DOUBLE_ARRAY -> {
                String[] e = text.isEmpty() ? new String[0] : text.split(",");
                double[] v = new double[e.length];
                for (int k = 0; k < e.length; k++) {
                    v[k] = Double.parseDouble(e[k]);
                }
                b.setDoubleArray(i, v);
            }
            default -> throw new IllegalArgumentException("no text writer for " + p.type());
        }
    }
}
