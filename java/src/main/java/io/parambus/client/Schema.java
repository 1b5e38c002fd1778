package io.parambus.client;

import io.parambus.Enumerator;
import io.parambus.ParamType;
import io.parambus.ParambusException;
import io.parambus.UpdateClass;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An instance's compiled schema (docs/schema-format.md), as pbusd sends it at connect:
 * the interface, and every parameter with its index, type, limits and texts
 * ({@link ParamInfo}). The {@code type}, {@code method} and {@code broadcast} records of
 * an interface with methods are checked for their place and otherwise not interpreted:
 * the parameter protocol does not use them. Immutable, so thread-safe.
 */
public final class Schema {
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;
    private static final int PARAM_MAX = 65535;
    private static final int NAME_MAX = 127;
    private static final int VALUE_SIZE_MAX = 65536;

    private final byte[] text;
    private final long hash;
    private final String interfaceName;
    private final int interfaceMajor;
    private final int interfaceMinor;
    private final List<ParamInfo> params;
    private final Map<String, ParamInfo> byName;

    private Schema(byte[] text, long hash, String interfaceName, int major, int minor, List<ParamInfo> params) {
        this.text = text;
        this.hash = hash;
        this.interfaceName = interfaceName;
        this.interfaceMajor = major;
        this.interfaceMinor = minor;
        this.params = Collections.unmodifiableList(params);
        Map<String, ParamInfo> m = new HashMap<>();
        for (ParamInfo p : params) {
            m.put(p.name(), p);
        }
        this.byName = m;
    }

    /**
     * The 64-bit FNV-1a hash of a compiled schema's text over its record lines, each with
     * its LF; comments and empty lines skipped (docs/schema-format.md, "The schema hash").
     */
    public static long hash(byte[] text) {
        long h = FNV_OFFSET;
        int pos = 0;
        while (pos < text.length) {
            int end = pos;
            while (end < text.length && text[end] != '\n') {
                end++;
            }
            if (end < text.length) {
                end++;
            }
            if (end - pos > 1 && text[pos] != '#') {
                for (int i = pos; i < end; i++) {
                    h = (h ^ (text[i] & 0xFF)) * FNV_PRIME;
                }
            }
            pos = end;
        }
        return h;
    }

    /**
     * Parses a compiled schema's text.
     *
     * @throws ParambusException {@code EINVAL} with a message naming the line and the problem
     *         ("schema line 7: param 'level': min '5' above max '1'") if the text is not a valid
     *         compiled schema of format 1
     */
    public static Schema parse(byte[] text) {
        return new Parser(text).run();
    }

    /** Parses a compiled schema's text given as a string (encoded as UTF-8); see {@link #parse(byte[])}. */
    public static Schema parse(String text) {
        return parse(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The schema's text, exactly as sent (a new array each call). */
    public byte[] text() {
        return text.clone();
    }

    /** The schema hash ({@link #hash(byte[])}): the instance's, as HELLO_REPLY announces it. */
    public long hash() {
        return hash;
    }

    /** The interface's fully qualified name, e.g. {@code com.example.psu.PowerSupply}. */
    public String interfaceName() {
        return interfaceName;
    }

    /** The interface's major version (an unsigned 32-bit number, as the segment's header holds it). */
    public int interfaceMajor() {
        return interfaceMajor;
    }

    /** The interface's minor version (an unsigned 32-bit number). */
    public int interfaceMinor() {
        return interfaceMinor;
    }

    /** The number of parameters. */
    public int paramCount() {
        return params.size();
    }

    /** Every parameter, in index order (unmodifiable). */
    public List<ParamInfo> params() {
        return params;
    }

    /**
     * Parameter {@code index}.
     *
     * @throws ParambusException {@code ENOENT} if the index is out of range
     */
    public ParamInfo param(int index) {
        if (index < 0 || index >= params.size()) {
            throw new ParambusException("ENOENT", "schema of " + interfaceName + ": no parameter " + index
                    + " (it has " + params.size() + ") (ENOENT)");
        }
        return params.get(index);
    }

    /**
     * Parameter {@code name}.
     *
     * @throws ParambusException {@code ENOENT} naming the parameter if there is none of that name
     */
    public ParamInfo param(String name) {
        ParamInfo p = byName.get(name);
        if (p == null) {
            throw new ParambusException("ENOENT", "schema of " + interfaceName + ": no parameter '" + name
                    + "' (ENOENT)");
        }
        return p;
    }

    /** The index of parameter {@code name}, or -1 if there is none. */
    public int find(String name) {
        ParamInfo p = byName.get(name);
        return p == null ? -1 : p.index();
    }

    /**
     * The indexes of the parameters whose names start with {@code prefix} and that may be
     * subscribed to (neither {@code noread} nor {@code nosubscriptions}), in index order;
     * "" gives all of them.
     */
    public int[] subscribableWithPrefix(String prefix) {
        return params.stream()
                .filter(p -> p.name().startsWith(prefix) && (p.flags() & (ParamInfo.NOREAD | ParamInfo.NOSUBSCRIPTIONS)) == 0)
                .mapToInt(ParamInfo::index).toArray();
    }

    /** The interface, its version, the number of parameters and the hash. */
    @Override
    public String toString() {
        return interfaceName + " " + interfaceMajor + "." + interfaceMinor + " (" + params.size()
                + " parameters, hash " + String.format("%016x", hash) + ")";
    }

    /** One parse of a schema's text, line by line, as the C library's schema.c. */
    private static final class Parser {
        private final byte[] text;
        private int line;
        private String interfaceName;
        private int major;
        private int minor;
        private boolean sawMethods;
        private final Map<String, List<Enumerator>> enums = new LinkedHashMap<>();
        private final List<ParamInfo> params = new ArrayList<>();
        private final Map<String, Integer> names = new HashMap<>();

        Parser(byte[] text) {
            this.text = text;
        }

        private ParambusException fail(String what) {
            // Decoded tokens may hold control characters: the message stays one line.
            return new ParambusException("EINVAL", "schema line " + line + ": " + what.replaceAll("\\p{Cntrl}", "?")
                    + " (EINVAL)");
        }

        /**
         * A token as it appeared, for messages. Lines are split into tokens as ISO-8859-1
         * (one char per byte), so that a token holds its bytes exactly, whatever they are:
         * the C loader compares and checks bytes, not text.
         */
        private static String shown(String token) {
            return new String(token.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
        }

        /** An escape's hex digit: upper case only, as the format writes them (the C loader's rule). */
        private static int escapeDigit(byte c) {
            return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        }

        /** A percent-encoded token's bytes (docs/schema-format.md, "Encoding"): no %00, no lower-case digits. */
        private byte[] decodeBytes(String token) {
            byte[] raw = token.getBytes(StandardCharsets.ISO_8859_1);
            if (token.indexOf('%') < 0) {
                return raw;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length);
            for (int i = 0; i < raw.length; i++) {
                if (raw[i] == '%') {
                    int hi = i + 2 < raw.length ? escapeDigit(raw[i + 1]) : -1;
                    int lo = i + 2 < raw.length ? escapeDigit(raw[i + 2]) : -1;
                    if (hi < 0 || lo < 0 || hi == 0 && lo == 0) {
                        throw fail("malformed percent-encoding in '" + shown(token) + "'");
                    }
                    out.write(hi << 4 | lo);
                    i += 2;
                } else {
                    out.write(raw[i]);
                }
            }
            return out.toByteArray();
        }

        /**
         * A percent-encoded token's text. The C loader takes any bytes in free texts, so
         * bytes that are not UTF-8 become U+FFFD here rather than refuse the schema.
         */
        private String decode(String token) {
            return new String(decodeBytes(token), StandardCharsets.UTF_8);
        }

        /** A percent-encoded token's bytes as ISO-8859-1: the token's identity (enum names and labels are compared so). */
        private String decodeRaw(String token) {
            return new String(decodeBytes(token), StandardCharsets.ISO_8859_1);
        }

        Schema run() {
            if (text.length > 0 && text[text.length - 1] != '\n') {
                throw fail("the file does not end with a newline");
            }
            for (byte b : text) {
                if (b == '\n') {
                    line++;
                } else if (b == 0) {
                    line++;
                    throw fail("NUL byte in line");
                }
            }
            line = 0;
            String all = new String(text, StandardCharsets.ISO_8859_1);
            boolean seenVersion = false;
            int pos = 0;
            while (pos < all.length()) {
                int nl = all.indexOf('\n', pos);
                String l = all.substring(pos, nl);
                pos = nl + 1;
                line++;
                if (l.isEmpty() || l.charAt(0) == '#') {
                    continue;
                }
                if (l.indexOf('\r') >= 0) {
                    throw fail("carriage return in line (the format uses LF only)");
                }
                if (l.charAt(0) == ' ' || l.charAt(l.length() - 1) == ' ' || l.contains("  ")) {
                    throw fail("tokens must be separated by exactly one space");
                }
                String[] tok = l.split(" ");
                if (!seenVersion) {
                    if (!tok[0].equals("pbus-schema")) {
                        throw fail("expected 'pbus-schema 1' as the first record");
                    }
                    if (tok.length != 2 || !tok[1].equals("1")) {
                        throw fail("unsupported schema format version '" + (tok.length > 1 ? shown(tok[1]) : "")
                                + "' (this client reads 1)");
                    }
                    seenVersion = true;
                } else if (tok[0].equals("interface")) {
                    interfaceRecord(tok);
                } else if (interfaceName == null) {
                    throw fail("expected the interface record before '" + shown(tok[0]) + "'");
                } else if (tok[0].equals("enum")) {
                    enumRecord(tok);
                } else if (tok[0].equals("param")) {
                    if (sawMethods) {
                        throw fail("param record after a type, method or broadcast record");
                    }
                    paramRecord(tok);
                } else if (tok[0].equals("type") || tok[0].equals("method") || tok[0].equals("broadcast")) {
                    if (tok.length < 2) {
                        throw fail(shown(tok[0]) + " record needs a name");
                    }
                    sawMethods = true;
                } else {
                    throw fail("unknown record '" + shown(tok[0]) + "'");
                }
            }
            if (!seenVersion) {
                throw fail("empty schema: expected 'pbus-schema 1'");
            }
            if (interfaceName == null) {
                throw fail("no interface record");
            }
            return new Schema(text.clone(), hash(text), interfaceName, major, minor, params);
        }

        private void interfaceRecord(String[] tok) {
            if (interfaceName != null) {
                throw fail("a second interface record");
            }
            String[] version = tok.length == 3 ? tok[2].split("\\.", -1) : new String[0];
            if (version.length != 2 || !version[0].matches("[0-9]+") || !version[1].matches("[0-9]+")) {
                throw fail("expected 'interface NAME MAJOR.MINOR'");
            }
            try {
                major = Integer.parseUnsignedInt(version[0]);
                minor = Integer.parseUnsignedInt(version[1]);
            } catch (NumberFormatException e) {
                throw fail("interface version '" + shown(tok[2]) + "' out of range");
            }
            interfaceName = decode(tok[1]);
        }

        private void enumRecord(String[] tok) {
            if (tok.length < 3) {
                throw fail("enum record needs a name and at least one enumerator");
            }
            String name = decode(tok[1]);
            String rawName = decodeRaw(tok[1]);
            if (!params.isEmpty()) {
                throw fail("enum '" + name + "' after the first param record");
            }
            if (enums.containsKey(rawName)) {
                throw fail("duplicate enum '" + name + "'");
            }
            List<Enumerator> list = new ArrayList<>();
            Set<String> rawLabels = new HashSet<>();
            for (int i = 2; i < tok.length; i++) {
                int eq = tok[i].indexOf('=');
                if (eq <= 0) {
                    throw fail("enumerator '" + shown(tok[i]) + "' is not LABEL=VALUE");
                }
                String label = decode(tok[i].substring(0, eq));
                String value = decode(tok[i].substring(eq + 1));
                int v;
                try {
                    if (!value.matches("[-+]?[0-9]+")) {
                        throw new NumberFormatException();
                    }
                    v = Integer.parseInt(value.startsWith("+") ? value.substring(1) : value);
                } catch (NumberFormatException e) {
                    throw fail("enumerator '" + shown(tok[i]) + "': value '" + value + "' is not a 32-bit integer");
                }
                if (!rawLabels.add(decodeRaw(tok[i].substring(0, eq)))) {
                    throw fail("enum '" + name + "': duplicate label '" + label + "'");
                }
                list.add(new Enumerator(v, label));
            }
            enums.put(rawName, List.copyOf(list));
        }

        private static boolean nameValid(String name) {
            return name.length() <= NAME_MAX && name.matches("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
        }

        private static ParamType typeOf(String token) {
            for (ParamType t : ParamType.values()) {
                if (t.spelling().equals(token)) {
                    return t;
                }
            }
            return null;
        }

        private int parseSize(String what, String text) {
            if (!text.matches("[0-9]+") || text.length() > 6 || Integer.parseInt(text) < 1
                    || Integer.parseInt(text) > VALUE_SIZE_MAX) {
                throw fail(what + " '" + text + "' not in 1.." + VALUE_SIZE_MAX);
            }
            return Integer.parseInt(text);
        }

        private void paramRecord(String[] tok) {
            if (tok.length < 3) {
                throw fail("param record needs a name and a type");
            }
            if (params.size() >= PARAM_MAX) {
                throw fail("more than " + PARAM_MAX + " parameters");
            }
            String name = decode(tok[1]);
            if (!nameValid(name)) {
                throw fail("invalid parameter name '" + name + "'");
            }
            if (names.containsKey(name)) {
                throw fail("duplicate parameter '" + name + "'");
            }
            ParamType type = typeOf(tok[2]);
            if (type == null) {
                throw fail("param '" + name + "': unknown type '" + shown(tok[2]) + "'");
            }
            Map<String, String> keys = new LinkedHashMap<>();
            Map<String, String> extra = new LinkedHashMap<>();
            Set<String> seenKeys = new HashSet<>();
            String enumRaw = null;
            int flags = 0;
            UpdateClass updateClass = UpdateClass.SETTING;
            for (int i = 3; i < tok.length; i++) {
                int eq = tok[i].indexOf('=');
                if (eq < 0) {
                    throw fail("param '" + name + "': '" + shown(tok[i]) + "' is not key=value");
                }
                String key = tok[i].substring(0, eq);
                byte[] bytes = decodeBytes(tok[i].substring(eq + 1));
                if (key.equals("default") && !ValueCodec.utf8Valid(bytes, 0, bytes.length)) {
                    throw fail("param '" + name + "': default is not UTF-8 text without NUL");
                }
                String value = new String(bytes, StandardCharsets.UTF_8);
                if (!seenKeys.add(key)) {
                    throw fail("param '" + name + "': key '" + shown(key) + "' given twice");
                }
                if (key.equals("enum")) {
                    enumRaw = new String(bytes, StandardCharsets.ISO_8859_1);
                }
                switch (key) {
                    case "size", "count", "enum", "unit", "min", "max", "step", "default", "group", "desc" -> keys.put(key, value);
                    case "flags" -> {
                        keys.put(key, value);
                        for (String f : value.split(",")) {
                            switch (f) {
                                case "readonly" -> flags |= ParamInfo.READONLY;
                                case "persistent" -> flags |= ParamInfo.PERSISTENT;
                                case "noread" -> flags |= ParamInfo.NOREAD;
                                case "nosubscriptions" -> flags |= ParamInfo.NOSUBSCRIPTIONS;
                                case "" -> { }
                                default -> throw fail("param '" + name + "': unknown flag '" + f + "'");
                            }
                        }
                    }
                    case "class" -> {
                        keys.put(key, value);
                        updateClass = switch (value) {
                            case "constant" -> UpdateClass.CONSTANT;
                            case "rare" -> UpdateClass.RARE;
                            case "setting" -> UpdateClass.SETTING;
                            case "live" -> UpdateClass.LIVE;
                            default -> throw fail("param '" + name + "': unknown class '" + value + "'");
                        };
                    }
                    default -> extra.put(shown(key), value);
                }
            }
            ParamType element = type.element();
            int valueSize;
            if (type == ParamType.STRING || type == ParamType.BYTES) {
                if (!keys.containsKey("size")) {
                    throw fail("param '" + name + "': " + tok[2] + " needs size=");
                }
                valueSize = parseSize("param '" + name + "': size", keys.get("size"));
            } else if (type.isArray()) {
                if (!keys.containsKey("count")) {
                    throw fail("param '" + name + "': an array needs count=");
                }
                valueSize = parseSize("param '" + name + "': count", keys.get("count")) * element.elementSize();
                if (valueSize > VALUE_SIZE_MAX) {
                    throw fail("param '" + name + "': array larger than " + VALUE_SIZE_MAX + " bytes");
                }
            } else {
                valueSize = element.elementSize();
            }
            if (keys.containsKey("size") && type != ParamType.STRING && type != ParamType.BYTES
                    || keys.containsKey("count") && !type.isArray()) {
                throw fail("param '" + name + "': size=/count= do not apply to " + tok[2]);
            }
            String enumName = null;
            List<Enumerator> enumerators = List.of();
            if (element == ParamType.ENUM) {
                enumName = keys.get("enum");
                if (enumName == null) {
                    throw fail("param '" + name + "': enum type needs enum=");
                }
                enumerators = enums.get(enumRaw);
                if (enumerators == null) {
                    throw fail("param '" + name + "': unknown enum '" + enumName + "'");
                }
            } else if (keys.containsKey("enum")) {
                throw fail("param '" + name + "': enum= applies to enum parameters only");
            }
            boolean hasMin = keys.containsKey("min");
            boolean hasMax = keys.containsKey("max");
            boolean hasStep = keys.containsKey("step");
            long min = 0;
            long max = 0;
            long step = 0;
            if (hasMin || hasMax || hasStep) {
                if (type == ParamType.STRING || type == ParamType.BYTES || element == ParamType.BOOL || element == ParamType.ENUM) {
                    throw fail("param '" + name + "': min/max/step do not apply to " + tok[2]);
                }
                min = hasMin ? number(name, "min", element, keys.get("min")) : 0;
                max = hasMax ? number(name, "max", element, keys.get("max")) : 0;
                step = hasStep ? number(name, "step", element, keys.get("step")) : 0;
                if (hasStep && !(element.isFloating() ? Double.longBitsToDouble(step) > 0
                        : element.isSignedInteger() ? step > 0 : step != 0)) {
                    throw fail("param '" + name + "': step '" + keys.get("step") + "' is not a positive " + tok[2]);
                }
            }
            ParamInfo draft = new ParamInfo(params.size(), name, type, valueSize, flags, updateClass,
                    keys.getOrDefault("unit", ""), keys.getOrDefault("desc", ""), keys.getOrDefault("group", ""),
                    hasMin, min, hasMax, max, hasStep, step, null, enumName, enumerators, extra);
            if (hasMin && hasMax && !ValueCodec.withinLimits(withoutMin(draft), min)) {
                throw fail("param '" + name + "': min " + keys.get("min") + " above max " + keys.get("max"));
            }
            byte[] defaultValue = null;
            if (keys.containsKey("default")) {
                try {
                    defaultValue = ValueCodec.parse(draft, keys.get("default"));
                } catch (ValueCodec.Invalid e) {
                    throw fail("param '" + name + "': default '" + keys.get("default") + "': " + e.getMessage());
                }
            }
            ParamInfo p = new ParamInfo(params.size(), name, type, valueSize, flags, updateClass,
                    keys.getOrDefault("unit", ""), keys.getOrDefault("desc", ""), keys.getOrDefault("group", ""),
                    hasMin, min, hasMax, max, hasStep, step, defaultValue, enumName, enumerators, extra);
            names.put(name, p.index());
            params.add(p);
        }

        private static ParamInfo withoutMin(ParamInfo p) {
            return new ParamInfo(p.index(), p.name(), p.type(), p.valueSize(), p.flags(), p.updateClass(), "", "", "",
                    false, 0, p.hasMax(), p.maxBits(), false, 0, null, p.enumName(), p.enumerators(), Map.of());
        }

        private long number(String name, String key, ParamType element, String text) {
            try {
                return ValueCodec.parseNumber(element, text);
            } catch (ValueCodec.Invalid e) {
                throw fail("param '" + name + "': " + key + " '" + text + "' is not a " + element.spelling());
            }
        }
    }
}
