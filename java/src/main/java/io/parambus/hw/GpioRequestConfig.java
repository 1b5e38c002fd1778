package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What to request of a chip with {@link GpioChip#request(GpioRequestConfig)}: up to 64
 * lines, each with its own {@link GpioLineSettings}, a consumer name and the kernel's
 * event buffer size. Immutable; made by a {@link Builder}:
 *
 * <pre>{@code
 * GpioRequestConfig config = GpioRequestConfig.builder().consumer("pump")
 *         .line(3, GpioLineSettings.output(true).build())
 *         .lines(GpioLineSettings.input().edge(GpioLineSettings.Edge.BOTH).build(), 4, 5, 6)
 *         .build();
 * }</pre>
 *
 * <p>Indexes and offsets: a line's <em>offset</em> is its number on the chip; its
 * <em>index</em> is its position in the request, in the order the lines were added.
 * Value masks ({@link GpioRequest#getValues(long)}) use indexes, as the kernel does.
 *
 * <p>The per-line settings are encoded into the kernel's {@code gpio_v2_line_config}
 * once, by {@link Builder#build()}: the most common flag set is the default, every other
 * distinct flag set, the initial output values and every distinct debounce period is one
 * attribute whose mask selects request indexes (libparambus-hw's encoding). The kernel
 * holds 10 attributes; settings needing more are refused there. Because the output
 * values travel in the request, an output requested high is never driven low first.
 */
public final class GpioRequestConfig {
    /** The consumer name when none is given. */
    public static final String DEFAULT_CONSUMER = "parambus";

    private final int[] offsets;
    private final GpioLineSettings[] settings;
    private final String consumer;
    private final byte[] consumerBytes;
    private final int eventBufferSize;
    private final MemorySegment encoded;

    private GpioRequestConfig(int[] offsets, GpioLineSettings[] settings, String consumer, int eventBufferSize) {
        this.offsets = offsets;
        this.settings = settings;
        this.consumer = consumer;
        this.consumerBytes = consumer.getBytes(StandardCharsets.UTF_8);
        this.eventBufferSize = eventBufferSize;
        this.encoded = encode(settings);
    }

    /** A new builder (no lines, consumer {@value #DEFAULT_CONSUMER}, the kernel's event buffer size). */
    public static Builder builder() {
        return new Builder();
    }

    /** The lines' offsets, by request index (a copy). */
    public int[] offsets() {
        return offsets.clone();
    }

    /** The lines' settings, by request index. */
    public List<GpioLineSettings> settings() {
        return List.of(settings);
    }

    /** The consumer name shown in line info. */
    public String consumer() {
        return consumer;
    }

    /** The kernel event buffer size asked for, in events; 0 for the kernel's default (16 per line). */
    public int eventBufferSize() {
        return eventBufferSize;
    }

    /** Number of lines. */
    public int lineCount() {
        return offsets.length;
    }

    int[] offsetsShared() {
        return offsets;
    }

    GpioLineSettings[] settingsShared() {
        return settings;
    }

    /**
     * Fills {@code request} (a {@code gpio_v2_line_request}, zeroed by this method) with
     * the lines, consumer, encoded config and event buffer size.
     */
    void writeRequest(MemorySegment request) {
        request.fill((byte) 0);
        for (int i = 0; i < offsets.length; i++) {
            request.set(JAVA_INT, GpioUapi.REQUEST_OFFSETS + 4L * i, offsets[i]);
        }
        MemorySegment.copy(MemorySegment.ofArray(consumerBytes), 0, request, GpioUapi.REQUEST_CONSUMER,
                consumerBytes.length);
        MemorySegment.copy(encoded, 0, request, GpioUapi.REQUEST_CONFIG, GpioUapi.LINE_CONFIG.byteSize());
        request.set(JAVA_INT, GpioUapi.REQUEST_NUM_LINES, offsets.length);
        request.set(JAVA_INT, GpioUapi.REQUEST_EVENT_BUFFER_SIZE, eventBufferSize);
    }

    /** The encoded {@code gpio_v2_line_config} (a read-only heap segment), for the tests. */
    MemorySegment encodedConfig() {
        return encoded.asReadOnly();
    }

    /**
     * Encodes per-line settings into a {@code gpio_v2_line_config} (a heap segment of its
     * size); refuses with {@link IllegalArgumentException} what needs more than the
     * kernel's 10 attributes.
     */
    static MemorySegment encode(GpioLineSettings[] s) {
        int n = s.length;
        long[] flags = new long[n];
        long outputMask = 0, outputBits = 0;
        for (int i = 0; i < n; i++) {
            flags[i] = s[i].kernelFlags();
            if (s[i].direction() == GpioLineSettings.Direction.OUTPUT) {
                outputMask |= 1L << i;
                if (s[i].outputValue()) {
                    outputBits |= 1L << i;
                }
            }
        }
        // The most common flag set is the default (no attribute); ties go to the earliest line.
        int best = 0, bestCount = 0;
        for (int i = 0; i < n; i++) {
            int count = 0;
            for (int j = 0; j < n; j++) {
                count += flags[j] == flags[i] ? 1 : 0;
            }
            if (count > bestCount) {
                best = i;
                bestCount = count;
            }
        }
        MemorySegment cfg = MemorySegment.ofArray(new long[(int) (GpioUapi.LINE_CONFIG.byteSize() / 8)]);
        long defaultFlags = flags[best];
        cfg.set(JAVA_LONG, GpioUapi.CONFIG_FLAGS, defaultFlags);
        List<long[]> attrs = new ArrayList<>(); // {id, value, mask}
        long done = 0;
        for (int i = 0; i < n; i++) {
            if (flags[i] == defaultFlags || (done & (1L << i)) != 0) {
                continue;
            }
            long mask = 0;
            for (int j = i; j < n; j++) {
                if (flags[j] == flags[i]) {
                    mask |= 1L << j;
                }
            }
            done |= mask;
            attrs.add(new long[] {GpioUapi.ATTR_ID_FLAGS, flags[i], mask});
        }
        if (outputMask != 0) {
            attrs.add(new long[] {GpioUapi.ATTR_ID_OUTPUT_VALUES, outputBits, outputMask});
        }
        done = 0;
        for (int i = 0; i < n; i++) {
            long period = s[i].debouncePeriodUs();
            if (period == 0 || (done & (1L << i)) != 0) {
                continue;
            }
            long mask = 0;
            for (int j = i; j < n; j++) {
                if (s[j].debouncePeriodUs() == period) {
                    mask |= 1L << j;
                }
            }
            done |= mask;
            attrs.add(new long[] {GpioUapi.ATTR_ID_DEBOUNCE, period, mask});
        }
        if (attrs.size() > GpioUapi.NUM_ATTRS_MAX) {
            throw new IllegalArgumentException("GPIO request: the lines' settings need " + attrs.size()
                    + " attributes (distinct flag sets, output values, distinct debounce periods) and the kernel"
                    + " holds " + GpioUapi.NUM_ATTRS_MAX + ": use fewer distinct settings or several requests");
        }
        cfg.set(JAVA_INT, GpioUapi.CONFIG_NUM_ATTRS, attrs.size());
        for (int k = 0; k < attrs.size(); k++) {
            long base = GpioUapi.CONFIG_ATTRS + k * GpioUapi.CONFIG_ATTRIBUTE.byteSize();
            long[] a = attrs.get(k);
            cfg.set(JAVA_INT, base + GpioUapi.CONFIG_ATTR_ATTR + GpioUapi.ATTR_ID, (int) a[0]);
            // The union's debounce_period_us is its first 4 bytes: a u32 stored as the low
            // half of the 64-bit field on a little-endian machine, the rest 0.
            cfg.set(JAVA_LONG, base + GpioUapi.CONFIG_ATTR_ATTR + GpioUapi.ATTR_VALUE, a[1]);
            cfg.set(JAVA_LONG, base + GpioUapi.CONFIG_ATTR_MASK, a[2]);
        }
        return cfg;
    }

    /**
     * Builds a {@link GpioRequestConfig}. Not thread-safe (one thread builds); reusable.
     */
    public static final class Builder {
        private final List<Integer> offsets = new ArrayList<>();
        private final List<GpioLineSettings> settings = new ArrayList<>();
        private String consumer = DEFAULT_CONSUMER;
        private int eventBufferSize;

        private Builder() {
        }

        /** Adds line {@code offset} (its index is the number of lines added before it) with {@code s}. */
        public Builder line(int offset, GpioLineSettings s) {
            Objects.requireNonNull(s, "settings");
            if (offset < 0) {
                throw new IllegalArgumentException("GPIO request: line offset " + offset + " is negative");
            }
            if (offsets.contains(offset)) {
                throw new IllegalArgumentException("GPIO request: line offset " + offset + " is given twice");
            }
            if (offsets.size() == GpioUapi.LINES_MAX) {
                throw new IllegalArgumentException("GPIO request: more than " + GpioUapi.LINES_MAX
                        + " lines (the kernel's GPIO_V2_LINES_MAX)");
            }
            offsets.add(offset);
            settings.add(s);
            return this;
        }

        /** Adds every line in {@code offsets}, in that order, all with {@code s}. */
        public Builder lines(GpioLineSettings s, int... lineOffsets) {
            for (int o : lineOffsets) {
                line(o, s);
            }
            return this;
        }

        /** Sets the consumer name shown in line info: 1 to 31 bytes of UTF-8. */
        public Builder consumer(String name) {
            int len = name.getBytes(StandardCharsets.UTF_8).length;
            if (len == 0 || len >= GpioUapi.NAME_SIZE || name.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("GPIO request: consumer name '" + name + "' must be 1 to "
                        + (GpioUapi.NAME_SIZE - 1) + " bytes of UTF-8 without NUL (is " + len + ")");
            }
            this.consumer = name;
            return this;
        }

        /** Sets the kernel's event buffer size in events (a hint; 0: 16 per line). */
        public Builder eventBufferSize(int events) {
            if (events < 0) {
                throw new IllegalArgumentException("GPIO request: event buffer size " + events + " is negative");
            }
            this.eventBufferSize = events;
            return this;
        }

        /**
         * The config; refuses with {@link IllegalArgumentException} a request without
         * lines and settings that need more than the kernel's 10 attributes.
         */
        public GpioRequestConfig build() {
            if (offsets.isEmpty()) {
                throw new IllegalArgumentException("GPIO request: no lines");
            }
            int[] o = offsets.stream().mapToInt(Integer::intValue).toArray();
            return new GpioRequestConfig(o, settings.toArray(GpioLineSettings[]::new), consumer, eventBufferSize);
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("GpioRequestConfig[consumer=").append(consumer);
        for (int i = 0; i < offsets.length; i++) {
            sb.append(", ").append(offsets[i]).append(": ").append(settings[i]);
        }
        return sb.append(']').toString();
    }

    /** Offsets as "3,4,5", for error messages. */
    static String describe(int[] offsets) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < offsets.length; i++) {
            sb.append(i == 0 ? "" : ",").append(offsets[i]);
        }
        return sb.toString();
    }

    /** Whether two configs request the same lines the same way (consumer and buffer size included). */
    @Override
    public boolean equals(Object o) {
        return o instanceof GpioRequestConfig c && Arrays.equals(offsets, c.offsets)
                && Arrays.equals(settings, c.settings) && consumer.equals(c.consumer)
                && eventBufferSize == c.eventBufferSize;
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(offsets), Arrays.hashCode(settings), consumer, eventBufferSize);
    }
}
