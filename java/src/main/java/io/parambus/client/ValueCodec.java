package io.parambus.client;

import io.parambus.Enumerator;
import io.parambus.ParamType;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;

/**
 * Values in their stored encoding (docs/segment-format.md §2.6, little-endian scalars,
 * UTF-8 strings, arrays of elements back to back): what is valid, how text becomes a
 * value and back — the rules of the C library's value.c, so that "3.3" means the same
 * to the Java client, {@code pbus} and pbusd's state file.
 *
 * <p>Two forms of a scalar appear here. Its <em>raw</em> form is its stored bytes read
 * as an unsigned little-endian number. Its <em>number</em> form is what limits are kept
 * in (segment-format.md §2.2): signed types sign-extended to 64 bits, unsigned ones
 * zero-extended, {@code float} and {@code double} as the bits of a binary64.
 * Stateless: every method may be called from any thread.
 */
final class ValueCodec {
    /** A value or text that does not fit: {@link #errno} is the positive code (EINVAL, ERANGE, EMSGSIZE). */
    static final class Invalid extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int errno;

        Invalid(int errno, String why) {
            super(why, null, false, false);
            this.errno = errno;
        }
    }

    /** The C library's bound on an array element's text (value.c's item buffer). */
    private static final int ELEMENT_TEXT_MAX = 128;

    private ValueCodec() {
    }

    /** The stored bytes at {@code off} read as an unsigned little-endian number of {@code size} bytes. */
    static long loadRaw(byte[] b, int off, int size) {
        long v = 0;
        for (int i = size - 1; i >= 0; i--) {
            v = v << 8 | (b[off + i] & 0xFF);
        }
        return v;
    }

    /** Stores the low {@code size} bytes of {@code raw} little-endian at {@code off}. */
    static void storeRaw(byte[] b, int off, int size, long raw) {
        for (int i = 0; i < size; i++) {
            b[off + i] = (byte) (raw >>> (8 * i));
        }
    }

    /** The number form of a raw scalar of type {@code element}. */
    static long rawToNumber(ParamType element, long raw) {
        return switch (element) {
            case INT8 -> (byte) raw;
            case INT16 -> (short) raw;
            case INT32, ENUM -> (int) raw;
            case FLOAT -> Double.doubleToRawLongBits(Float.intBitsToFloat((int) raw));
            default -> raw;
        };
    }

    /** The raw form of a number of type {@code element} (which must fit it). */
    static long numberToRaw(ParamType element, long number) {
        return switch (element) {
            case FLOAT -> Float.floatToRawIntBits((float) Double.longBitsToDouble(number)) & 0xFFFFFFFFL;
            case DOUBLE, INT64, UINT64 -> number;
            default -> number & (-1L >>> (64 - 8 * element.elementSize()));
        };
    }

    /** A number as a double: unsigned 64-bit values above 2^53 and signed ones beyond ±2^53 rounded. */
    static double numberAsDouble(ParamType element, long number) {
        if (element.isFloating()) {
            return Double.longBitsToDouble(number);
        }
        if (element == ParamType.UINT64 && number < 0) {
            return (double) (number >>> 1) * 2.0 + (number & 1);
        }
        return (double) number;
    }

    /** Whether a number of parameter {@code p}'s element type lies within its limits. */
    static boolean withinLimits(ParamInfo p, long number) {
        ParamType e = p.type().element();
        if (e.isFloating()) {
            double d = Double.longBitsToDouble(number);
            if ((p.hasMin() || p.hasMax()) && Double.isNaN(d)) {
                return false;
            }
            return !(p.hasMin() && d < Double.longBitsToDouble(p.minBits()))
                    && !(p.hasMax() && d > Double.longBitsToDouble(p.maxBits()));
        }
        if (e.isSignedInteger()) {
            return !(p.hasMin() && number < p.minBits()) && !(p.hasMax() && number > p.maxBits());
        }
        return !(p.hasMin() && Long.compareUnsigned(number, p.minBits()) < 0)
                && !(p.hasMax() && Long.compareUnsigned(number, p.maxBits()) > 0);
    }

    /**
     * Whether a value is one parameter {@code p} may hold, as pbusd checks a SET's write
     * (socket-protocol.md §3.3, steps 4 to 6): 0, or the positive code of the first
     * check it fails: EMSGSIZE (above the capacity), EINVAL (a length the type cannot
     * have, a bool not 0 or 1, a string not UTF-8), ERANGE (outside the limits, not an
     * enumerator).
     */
    static int check(ParamInfo p, byte[] v, int off, int len) {
        ParamType t = p.type();
        ParamType e = t.element();
        int esize = e.elementSize();
        if (len > p.valueSize()) {
            return Errno.EMSGSIZE;
        }
        if (t == ParamType.STRING) {
            return utf8Valid(v, off, len) ? 0 : Errno.EINVAL;
        }
        if (t == ParamType.BYTES) {
            return 0;
        }
        if (!t.isArray() && len != esize) {
            return Errno.EINVAL;
        }
        if (len % esize != 0) {
            return Errno.EINVAL;
        }
        for (int k = 0; k < len; k += esize) {
            long n = rawToNumber(e, loadRaw(v, off + k, esize));
            if (e == ParamType.BOOL && n > 1) {
                return Errno.EINVAL;
            }
            if (e == ParamType.ENUM && p.enumLabel((int) n) == null) {
                return Errno.ERANGE;
            }
            if (e != ParamType.BOOL && e != ParamType.ENUM && !withinLimits(p, n)) {
                return Errno.ERANGE;
            }
        }
        return 0;
    }

    /** Strict UTF-8 without NUL (the C library's pbus_utf8_valid()): no overlong forms, no surrogates, nothing above U+10FFFF. */
    static boolean utf8Valid(byte[] s, int off, int n) {
        int i = off;
        int end = off + n;
        while (i < end) {
            int c = s[i] & 0xFF;
            if (c < 0x80) {
                if (c == 0) {
                    return false;
                }
                i++;
                continue;
            }
            int len;
            int cp;
            if (c >= 0xC2 && c <= 0xDF) {
                len = 2;
                cp = c & 0x1F;
            } else if (c >= 0xE0 && c <= 0xEF) {
                len = 3;
                cp = c & 0x0F;
            } else if (c >= 0xF0 && c <= 0xF4) {
                len = 4;
                cp = c & 0x07;
            } else {
                return false;
            }
            if (i + len > end) {
                return false;
            }
            for (int k = 1; k < len; k++) {
                int b = s[i + k] & 0xFF;
                if ((b & 0xC0) != 0x80) {
                    return false;
                }
                cp = cp << 6 | (b & 0x3F);
            }
            if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) || len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) {
                return false;
            }
            i += len;
        }
        return true;
    }

    private static final BigInteger[] SIGNED_LOW = {
        BigInteger.valueOf(Byte.MIN_VALUE), BigInteger.valueOf(Short.MIN_VALUE), BigInteger.valueOf(Integer.MIN_VALUE),
        BigInteger.valueOf(Long.MIN_VALUE)};
    private static final BigInteger[] SIGNED_HIGH = {
        BigInteger.valueOf(Byte.MAX_VALUE), BigInteger.valueOf(Short.MAX_VALUE), BigInteger.valueOf(Integer.MAX_VALUE),
        BigInteger.valueOf(Long.MAX_VALUE)};

    private static int widthSlot(int size) {
        return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    }

    /**
     * A number of type {@code element} from text (the C library's pbus_number_parse()):
     * decimal only; {@code true/false/1/0/on/off} for bool; floating point without hex,
     * {@code inf} or {@code nan}. Returns the number form.
     *
     * @throws Invalid EINVAL (not a number of the type) or ERANGE (outside the type's range)
     */
    static long parseNumber(ParamType element, String text) {
        if (text.isEmpty() || text.charAt(0) == ' ' || text.charAt(0) == '\t') {
            throw new Invalid(Errno.EINVAL, "not a " + element.spelling());
        }
        if (element == ParamType.BOOL) {
            if (text.equalsIgnoreCase("true") || text.equals("1") || text.equalsIgnoreCase("on")) {
                return 1;
            }
            if (text.equalsIgnoreCase("false") || text.equals("0") || text.equalsIgnoreCase("off")) {
                return 0;
            }
            throw new Invalid(Errno.EINVAL, "not a bool (true, false, 1, 0, on, off)");
        }
        if (element.isFloating()) {
            for (int i = 0; i < text.length(); i++) {
                if ("0123456789+-.eE".indexOf(text.charAt(i)) < 0) {
                    throw new Invalid(Errno.EINVAL, "not a decimal " + element.spelling());
                }
            }
            double d;
            try {
                d = Double.parseDouble(text);
            } catch (NumberFormatException e) {
                throw new Invalid(Errno.EINVAL, "not a decimal " + element.spelling());
            }
            // a float takes what rounds to a finite float: Float.MAX_VALUE's own
            // shortest text, 3.4028235e38, is a little above it
            if (Double.isInfinite(d) || element == ParamType.FLOAT && Float.isInfinite((float) d)) {
                throw new Invalid(Errno.ERANGE, "outside the range of " + element.spelling());
            }
            return Double.doubleToRawLongBits(d);
        }
        int start = text.charAt(0) == '-' || text.charAt(0) == '+' ? 1 : 0;
        if (start == text.length()) {
            throw new Invalid(Errno.EINVAL, "not a decimal integer");
        }
        for (int i = start; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new Invalid(Errno.EINVAL, "not a decimal integer");
            }
        }
        BigInteger v = new BigInteger(text.charAt(0) == '+' ? text.substring(1) : text);
        if (element.isSignedInteger()) {
            int slot = widthSlot(element.elementSize());
            if (v.compareTo(SIGNED_LOW[slot]) < 0 || v.compareTo(SIGNED_HIGH[slot]) > 0) {
                throw new Invalid(Errno.ERANGE, "outside the range of " + element.spelling());
            }
            return v.longValue();
        }
        if (text.charAt(0) == '-' || v.bitLength() > 8 * element.elementSize()) {
            throw new Invalid(Errno.ERANGE, "outside the range of " + element.spelling());
        }
        return v.longValue();
    }

    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** One element from text into {@code out} at {@code off}: an enum by label (exact, then any case) or number. */
    private static void parseElement(ParamInfo p, ParamType e, String text, byte[] out, int off) {
        long number;
        if (e == ParamType.ENUM) {
            Integer found = Enumerator.valueOf(p.enumerators(), text, true);
            if (found == null) {
                // A number as value.c takes it (strtoll, base 10): white space, a sign,
                // ASCII digits; Long.parseLong alone would take other scripts' digits too.
                String digits = text.replaceFirst("^[ \t\n\u000B\f\r]+", "");
                long v;
                try {
                    if (!digits.matches("[-+]?[0-9]+")) {
                        throw new NumberFormatException();
                    }
                    v = Long.parseLong(digits);
                } catch (NumberFormatException x) {
                    throw new Invalid(Errno.EINVAL, "not a label of " + p.enumName());
                }
                if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE || p.enumLabel((int) v) == null) {
                    throw new Invalid(Errno.ERANGE, "not an enumerator of " + p.enumName());
                }
                found = (int) v;
            }
            number = found;
        } else {
            number = parseNumber(e, text);
        }
        storeRaw(out, off, e.elementSize(), numberToRaw(e, number));
    }

    /**
     * A value of {@code p} from text (the C library's pbus_value_parse()), checked as
     * {@link #check} does. Strings are taken as they are, bytes as hex digits, arrays as
     * elements separated by commas (an empty text is an empty array).
     *
     * @throws Invalid EINVAL, ERANGE or EMSGSIZE
     */
    static byte[] parse(ParamInfo p, String text) {
        ParamType t = p.type();
        ParamType e = t.element();
        byte[] out;
        if (t == ParamType.STRING) {
            out = text.getBytes(StandardCharsets.UTF_8);
            if (out.length > p.valueSize()) {
                throw new Invalid(Errno.EMSGSIZE, out.length + " bytes, above its size of " + p.valueSize());
            }
        } else if (t == ParamType.BYTES) {
            // Counted in the text's bytes, as value.c counts them (strlen), not in chars.
            byte[] digits = text.getBytes(StandardCharsets.UTF_8);
            if (digits.length % 2 != 0) {
                throw new Invalid(Errno.EINVAL, "not hex digits in pairs");
            }
            if (digits.length / 2 > p.valueSize()) {
                throw new Invalid(Errno.EMSGSIZE, digits.length / 2 + " bytes, above its size of " + p.valueSize());
            }
            out = new byte[digits.length / 2];
            for (int i = 0; i < out.length; i++) {
                int hi = hexDigit((char) (digits[2 * i] & 0xFF));
                int lo = hexDigit((char) (digits[2 * i + 1] & 0xFF));
                if (hi < 0 || lo < 0) {
                    throw new Invalid(Errno.EINVAL, "not hex digits in pairs");
                }
                out[i] = (byte) (hi << 4 | lo);
            }
        } else if (t.isArray()) {
            int esize = e.elementSize();
            String[] items = text.isEmpty() ? new String[0] : text.split(",", -1);
            // Element by element, each checked before the next, as value.c does: the first
            // fault is the one reported (an element of 128 bytes or more is malformed there).
            out = new byte[Math.min(items.length, p.count()) * esize];
            for (int i = 0; i < items.length; i++) {
                if (items[i].isEmpty() || items[i].getBytes(StandardCharsets.UTF_8).length >= ELEMENT_TEXT_MAX) {
                    throw new Invalid(Errno.EINVAL, items[i].isEmpty() ? "an empty element" : "an element of 128 bytes or more");
                }
                if ((long) (i + 1) * esize > p.valueSize()) {
                    throw new Invalid(Errno.EMSGSIZE, items.length + " elements, above its count of " + p.count());
                }
                parseElement(p, e, items[i], out, i * esize);
            }
        } else {
            out = new byte[e.elementSize()];
            parseElement(p, e, text, out, 0);
        }
        int r = check(p, out, 0, out.length);
        if (r != 0) {
            throw new Invalid(r, r == Errno.ERANGE ? (e == ParamType.ENUM ? "not an enumerator of " + p.enumName()
                    : "outside its limits " + limitsText(p)) : "not a valid " + t.spelling());
        }
        return out;
    }

    /** The limits as text: {@code -1000 … 1000}, {@code ≥ 0}, {@code ≤ 5}. */
    static String limitsText(ParamInfo p) {
        ParamType e = p.type().element();
        if (p.hasMin() && p.hasMax()) {
            return formatNumber(e, p.minBits()) + " … " + formatNumber(e, p.maxBits());
        }
        if (p.hasMin()) {
            return "≥ " + formatNumber(e, p.minBits());
        }
        if (p.hasMax()) {
            return "≤ " + formatNumber(e, p.maxBits());
        }
        return "(none)";
    }

    /** A number of type {@code element} as text (signed, unsigned or shortest floating point). */
    static String formatNumber(ParamType element, long number) {
        if (element.isFloating()) {
            return formatFloating(Double.longBitsToDouble(number), element == ParamType.FLOAT);
        }
        if (element == ParamType.BOOL) {
            return number != 0 ? "true" : "false";
        }
        return element.isSignedInteger() ? Long.toString(number) : Long.toUnsignedString(number);
    }

    /** The value's text, as the C library's pbus_value_format() writes it. */
    static String format(ParamInfo p, byte[] v, int off, int len) {
        ParamType t = p.type();
        if (t == ParamType.STRING) {
            return new String(v, off, len, StandardCharsets.UTF_8);
        }
        StringBuilder sb = new StringBuilder();
        if (t == ParamType.BYTES) {
            for (int i = 0; i < len; i++) {
                sb.append(Character.forDigit((v[off + i] >> 4) & 0xF, 16)).append(Character.forDigit(v[off + i] & 0xF, 16));
            }
            return sb.toString();
        }
        ParamType e = t.element();
        int esize = e.elementSize();
        for (int k = 0; k + esize <= len; k += esize) {
            if (k > 0) {
                sb.append(',');
            }
            long n = rawToNumber(e, loadRaw(v, off + k, esize));
            String label = e == ParamType.ENUM ? p.enumLabel((int) n) : null;
            sb.append(label != null ? label : formatNumber(e, n));
        }
        return sb.toString();
    }

    /**
     * The shortest of C's {@code %.Ng} (N from 6 for float, 15 for double, up to 17)
     * that reads back as the same value: the C library's format of floating point.
     */
    static String formatFloating(double d, boolean single) {
        for (int precision = single ? 6 : 15; precision < 17; precision++) {
            String s = formatG(d, precision);
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return s;
            }
            double back = Double.parseDouble(s);
            if (single ? (float) back == (float) d : back == d) {
                return s;
            }
        }
        return formatG(d, 17);
    }

    /** C's {@code printf("%.Pg", d)} with glibc's exact rounding. */
    static String formatG(double d, int precision) {
        boolean negative = (Double.doubleToRawLongBits(d) & Long.MIN_VALUE) != 0;
        if (Double.isNaN(d)) {
            return negative ? "-nan" : "nan";
        }
        if (Double.isInfinite(d)) {
            return negative ? "-inf" : "inf";
        }
        if (d == 0) {
            return negative ? "-0" : "0";
        }
        BigDecimal rounded = new BigDecimal(d).abs().round(new MathContext(precision, RoundingMode.HALF_EVEN));
        int exponent = rounded.precision() - rounded.scale() - 1;
        String digits = rounded.unscaledValue().toString();
        while (digits.length() < precision) {
            digits += "0";
        }
        digits = digits.substring(0, precision);
        StringBuilder sb = new StringBuilder(negative ? "-" : "");
        if (exponent < -4 || exponent >= precision) {
            sb.append(digits.charAt(0));
            String frac = stripZeros(digits.substring(1));
            if (!frac.isEmpty()) {
                sb.append('.').append(frac);
            }
            sb.append(exponent < 0 ? "e-" : "e+");
            int ax = Math.abs(exponent);
            if (ax < 10) {
                sb.append('0');
            }
            sb.append(ax);
        } else if (exponent >= 0) {
            sb.append(digits, 0, exponent + 1);
            String frac = stripZeros(digits.substring(exponent + 1));
            if (!frac.isEmpty()) {
                sb.append('.').append(frac);
            }
        } else {
            String frac = stripZeros("0".repeat(-exponent - 1) + digits);
            sb.append("0.").append(frac);
        }
        return sb.toString();
    }

    private static String stripZeros(String s) {
        int n = s.length();
        while (n > 0 && s.charAt(n - 1) == '0') {
            n--;
        }
        return s.substring(0, n);
    }
}
