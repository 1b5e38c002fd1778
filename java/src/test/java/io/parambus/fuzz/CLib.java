package io.parambus.fuzz;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The C library (the reference, docs/segment-format.md and schema-format.md say) as
 * the fuzz targets' oracle: {@code libparambus.so} of the C build the tests are given
 * (the system property {@code pbus.build}), called through the FFM API. A Java decoder
 * must accept exactly what the C one accepts and decode it to the same thing.
 *
 * <p>Only what the targets compare is bound: opening a table and reading, parsing and
 * formatting its parameters' values; parsing a compiled schema. Threads: every method
 * may be called from any thread (the C functions used are thread-safe on distinct
 * objects); a {@link Table} is used by one thread at a time.
 */
@SuppressWarnings("restricted") // the FFM API's restricted methods: a test's native boundary
public final class CLib {
    private CLib() {
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIB = load();

    private static SymbolLookup load() {
        String build = System.getProperty("pbus.build", "");
        if (build.isEmpty()) {
            throw new IllegalStateException("the system property pbus.build (the C build tree, whose libparambus.so"
                    + " is the fuzz targets' oracle) is not set: run the tests through tests/java/run-maven BUILD_DIR");
        }
        Path so = Path.of(build, "libparambus.so");
        if (!Files.exists(so)) {
            throw new IllegalStateException(so + " is missing: build the C side first (ninja -C " + build + ")");
        }
        return SymbolLookup.libraryLookup(so, Arena.global());
    }

    private static MethodHandle function(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(LIB.find(name).orElseThrow(() -> new IllegalStateException("no " + name
                + " in libparambus.so")), fd);
    }

    private static final MethodHandle TABLE_OPEN = function("pbus_table_open",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle TABLE_CLOSE = function("pbus_table_close", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle TABLE_PARAM_COUNT = function("pbus_table_param_count",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle TABLE_PARAM = function("pbus_table_param",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle PARAM_READ = function("pbus_param_read",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle PARAM_PARSE = function("pbus_param_parse",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle PARAM_FORMAT = function("pbus_param_format",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG));
    private static final MethodHandle TABLE_STATE = function("pbus_table_state",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle PARAM_DESCRIBE = function("pbus_param_describe",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle PARAM_ENUMERATOR = function("pbus_param_enumerator",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle SCHEMA_PARSE = function("pbus_schema_parse",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle SCHEMA_FREE = function("pbus_schema_free", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle SCHEMA_HASH = function("pbus_schema_hash",
            FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    private static final MethodHandle SCHEMA_PARAM_COUNT = function("pbus_schema_param_count",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle SCHEMA_PARAM_NAME = function("pbus_schema_param_name",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle SCHEMA_INTERFACE = function("pbus_schema_interface",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));

    /** The largest value (65536 bytes) and a word of slack. */
    private static final int VALUE_MAX = 65536 + 8;

    private static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private static MemorySegment cString(Arena a, byte[] text) {
        MemorySegment s = a.allocate(text.length + 1L);
        MemorySegment.copy(text, 0, s, JAVA_BYTE, 0, text.length);
        s.set(JAVA_BYTE, text.length, (byte) 0);
        return s;
    }

    private static String string(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? null : p.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** One parameter's value as {@code pbus_param_read()} returns it. */
    public record Read(int result, byte[] value, long timestampNs, long seq, int status, int length) {
    }

    /**
     * What {@code pbus_param_describe()} says of a parameter (struct pbus_param_info, whose
     * layout on LP64: four string pointers, seven u32, the three 8-byte limits at 64, the
     * default's pointer at 88 and length at 96); texts as their bytes.
     */
    public record Info(byte[] name, byte[] unit, byte[] description, byte[] group, int type, int flags,
            int updateClass, int valueSize, int elementSize, int enumCount, long min, long max, long step,
            byte[] defaultValue, List<byte[]> labels, List<Integer> values) {
    }

    /** A text parsed by {@code pbus_param_parse()}: 0 and the value, or the negative errno and null. */
    public record Parsed(int result, byte[] value) {
    }

    /** A table opened by the C library ({@code pbus_table_open(name, PBUS_OPEN_READ)}). */
    public static final class Table implements AutoCloseable {
        private final MemorySegment table;
        private final Arena arena = Arena.ofConfined();
        private final MemorySegment buf = arena.allocate(VALUE_MAX, 8);
        private final MemorySegment sample = arena.allocate(24, 8);
        private final MemorySegment ret = arena.allocate(ADDRESS);
        private final MemorySegment text = arena.allocate(8 * VALUE_MAX);
        private final MemorySegment info = arena.allocate(104, 8);

        private Table(MemorySegment table) {
            this.table = table;
        }

        /** Open {@code instance} for reading: the table, or null with {@code result[0]} the negative errno. */
        public static Table open(String instance, int[] result) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment ret = a.allocate(ADDRESS);
                int r = (int) TABLE_OPEN.invokeExact(a.allocateFrom(instance), 0, ret);
                result[0] = r;
                return r < 0 ? null : new Table(ret.get(ADDRESS, 0));
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /** The number of parameters. */
        public int paramCount() {
            try {
                return (int) TABLE_PARAM_COUNT.invokeExact(table);
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        private MemorySegment param(int index) throws Throwable {
            int r = (int) TABLE_PARAM.invokeExact(table, index, ret);
            if (r < 0) {
                throw new IllegalStateException("pbus_table_param(" + index + "): " + r);
            }
            return ret.get(ADDRESS, 0);
        }

        /** {@code pbus_table_state()}: 1 live, 2 closed, 3 replaced, 4 orphaned, or a negative errno. */
        public int state() {
            try {
                return (int) TABLE_STATE.invokeExact(table);
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        private static byte[] bytesAt(MemorySegment p, long length) {
            return p.reinterpret(length).toArray(JAVA_BYTE);
        }

        private static byte[] cStringAt(MemorySegment p) {
            MemorySegment s = p.reinterpret(Long.MAX_VALUE);
            long n = 0;
            while (s.get(JAVA_BYTE, n) != 0) {
                n++;
            }
            return bytesAt(p, n);
        }

        /** What the C library says parameter {@code index} is. */
        public Info describe(int index) {
            try {
                MemorySegment p = param(index);
                int r = (int) PARAM_DESCRIBE.invokeExact(p, info);
                if (r < 0) {
                    throw new IllegalStateException("pbus_param_describe(" + index + "): " + r);
                }
                int flags = info.get(JAVA_INT, 40);
                int enumCount = info.get(JAVA_INT, 56);
                byte[] def = (flags & 128) != 0
                        ? bytesAt(info.get(ADDRESS, 88), Integer.toUnsignedLong(info.get(JAVA_INT, 96))) : null;
                List<byte[]> labels = new ArrayList<>();
                List<Integer> values = new ArrayList<>();
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment label = a.allocate(ADDRESS);
                    MemorySegment value = a.allocate(JAVA_INT);
                    for (int k = 0; k < enumCount; k++) {
                        int e = (int) PARAM_ENUMERATOR.invokeExact(p, k, label, value);
                        if (e < 0) {
                            throw new IllegalStateException("pbus_param_enumerator(" + index + ", " + k + "): " + e);
                        }
                        labels.add(cStringAt(label.get(ADDRESS, 0)));
                        values.add(value.get(JAVA_INT, 0));
                    }
                }
                return new Info(cStringAt(info.get(ADDRESS, 0)), cStringAt(info.get(ADDRESS, 8)),
                        cStringAt(info.get(ADDRESS, 16)), cStringAt(info.get(ADDRESS, 24)), info.get(JAVA_INT, 36),
                        flags, info.get(JAVA_INT, 44), info.get(JAVA_INT, 48), info.get(JAVA_INT, 52), enumCount,
                        info.get(JAVA_LONG, 64), info.get(JAVA_LONG, 72), info.get(JAVA_LONG, 80), def, labels, values);
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /** Parameter {@code index}'s value, as the C reader returns it. */
        public Read read(int index) {
            try {
                int r = (int) PARAM_READ.invokeExact(param(index), buf, (long) VALUE_MAX, sample);
                if (r < 0) {
                    return new Read(r, null, 0, 0, 0, 0);
                }
                int length = sample.get(JAVA_INT, 20);
                byte[] v = new byte[length];
                MemorySegment.copy(buf, JAVA_BYTE, 0, v, 0, length);
                return new Read(r, v, sample.get(JAVA_LONG, 0), sample.get(JAVA_LONG, 8), sample.get(JAVA_INT, 16),
                        length);
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /** {@code text} (without NUL) parsed as a value of parameter {@code index}. */
        public Parsed parse(int index, byte[] textBytes) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment length = a.allocate(JAVA_LONG);
                int r = (int) PARAM_PARSE.invokeExact(param(index), cString(a, textBytes), buf, (long) VALUE_MAX,
                        length);
                if (r < 0) {
                    return new Parsed(r, null);
                }
                byte[] v = new byte[(int) length.get(JAVA_LONG, 0)];
                MemorySegment.copy(buf, JAVA_BYTE, 0, v, 0, v.length);
                return new Parsed(0, v);
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        /** The value {@code value} of parameter {@code index} as text, as {@code pbus_param_format()} writes it. */
        public byte[] format(int index, byte[] value) {
            try {
                MemorySegment.copy(value, 0, buf, JAVA_BYTE, 0, value.length);
                int n = (int) PARAM_FORMAT.invokeExact(param(index), buf, (long) value.length, text, text.byteSize());
                if (n < 0 || n >= text.byteSize()) {
                    throw new IllegalStateException("pbus_param_format(" + index + "): " + n);
                }
                byte[] out = new byte[n];
                MemorySegment.copy(text, JAVA_BYTE, 0, out, 0, n);
                return out;
            } catch (Throwable t) {
                throw unexpected(t);
            }
        }

        @Override
        public void close() {
            try {
                TABLE_CLOSE.invokeExact(table);
            } catch (Throwable t) {
                throw unexpected(t);
            } finally {
                arena.close();
            }
        }
    }

    /** What {@code pbus_schema_parse()} made of a text: its result, and if 0 what the schema holds. */
    public record SchemaResult(int result, String error, long hash, String interfaceName, int major, int minor,
            List<String> names) {
    }

    /** {@code text} parsed by the C schema loader. */
    public static SchemaResult parseSchema(byte[] text) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocate(Math.max(1, text.length));
            MemorySegment.copy(text, 0, t, JAVA_BYTE, 0, text.length);
            MemorySegment error = a.allocate(512);
            MemorySegment ret = a.allocate(ADDRESS);
            int r = (int) SCHEMA_PARSE.invokeExact(t, (long) text.length, a.allocateFrom("fuzz"), error, 512L, ret);
            if (r < 0) {
                return new SchemaResult(r, error.getString(0), 0, null, 0, 0, List.of());
            }
            MemorySegment s = ret.get(ADDRESS, 0);
            try {
                long hash = (long) SCHEMA_HASH.invokeExact(s);
                int count = (int) SCHEMA_PARAM_COUNT.invokeExact(s);
                List<String> names = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    names.add(string((MemorySegment) SCHEMA_PARAM_NAME.invokeExact(s, i)));
                }
                MemorySegment major = a.allocate(JAVA_INT);
                MemorySegment minor = a.allocate(JAVA_INT);
                String iface = string((MemorySegment) SCHEMA_INTERFACE.invokeExact(s, major, minor));
                return new SchemaResult(0, null, hash, iface, major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0), names);
            } finally {
                SCHEMA_FREE.invokeExact(s);
            }
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** The positive errno's name of a negative result ({@code -71} → {@code EPROTO}). */
    public static String errnoName(int result) {
        return switch (-result) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 13 -> "EACCES";
            case 22 -> "EINVAL";
            case 34 -> "ERANGE";
            case 71 -> "EPROTO";
            case 90 -> "EMSGSIZE";
            case 105 -> "ENOBUFS";
            default -> "E" + (-result);
        };
    }
}
