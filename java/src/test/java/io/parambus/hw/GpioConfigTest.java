package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.parambus.hw.GpioLineSettings.Bias;
import io.parambus.hw.GpioLineSettings.Direction;
import io.parambus.hw.GpioLineSettings.Drive;
import io.parambus.hw.GpioLineSettings.Edge;
import io.parambus.hw.GpioLineSettings.EventClock;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Line settings and request configs: the combinations the kernel forbids are refused
 * before any system call, naming the problem; the per-line settings are encoded into
 * the kernel's {@code gpio_v2_line_config} as libparambus-hw encodes them (default
 * flags, FLAGS / OUTPUT_VALUES / DEBOUNCE attributes whose masks select request
 * indexes), so that the request ioctl itself carries the initial output values.
 */
class GpioConfigTest {
    private static void refused(String expectedPart, Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        assertTrue(x.getMessage().contains(expectedPart), x.getMessage());
    }

    @Test
    void settingsTheKernelForbidsAreRefused() {
        refused("edge detection BOTH needs direction INPUT, not AS_IS",
                () -> GpioLineSettings.builder().edge(Edge.BOTH).build());
        refused("edge detection RISING needs direction INPUT, not OUTPUT",
                () -> GpioLineSettings.output(false).edge(Edge.RISING).build());
        refused("debounce period needs direction INPUT, not OUTPUT",
                () -> GpioLineSettings.output(false).debouncePeriodUs(10).build());
        refused("drive OPEN_DRAIN needs direction OUTPUT, not INPUT",
                () -> GpioLineSettings.input().drive(Drive.OPEN_DRAIN).build());
        refused("drive OPEN_SOURCE needs direction OUTPUT, not AS_IS",
                () -> GpioLineSettings.builder().drive(Drive.OPEN_SOURCE).build());
        refused("an output value needs direction OUTPUT, not INPUT",
                () -> GpioLineSettings.input().outputValue(true).build());
        refused("bias PULL_UP needs an explicit direction",
                () -> GpioLineSettings.builder().bias(Bias.PULL_UP).build());
        refused("debounce period -1 us", () -> GpioLineSettings.input().debouncePeriodUs(-1));
        refused("debounce period 4294967296 us", () -> GpioLineSettings.input().debouncePeriodUs(1L << 32));
        // What is allowed: each of those with the right direction.
        GpioLineSettings in = GpioLineSettings.input().edge(Edge.BOTH).bias(Bias.PULL_DOWN)
                .debounce(Duration.ofNanos(1500)).eventClock(EventClock.REALTIME).activeLow(true).build();
        assertEquals(2, in.debouncePeriodUs(), "rounded up to whole microseconds");
        GpioLineSettings out = GpioLineSettings.output(true).drive(Drive.OPEN_DRAIN).bias(Bias.PULL_UP).build();
        assertTrue(out.outputValue());
        assertEquals(out, out.toBuilder().build());
        assertEquals(GpioUapi.FLAG_OUTPUT | GpioUapi.FLAG_OPEN_DRAIN | GpioUapi.FLAG_BIAS_PULL_UP, out.kernelFlags());
        assertEquals(GpioUapi.FLAG_INPUT | GpioUapi.FLAG_EDGE_RISING | GpioUapi.FLAG_EDGE_FALLING
                | GpioUapi.FLAG_BIAS_PULL_DOWN | GpioUapi.FLAG_EVENT_CLOCK_REALTIME | GpioUapi.FLAG_ACTIVE_LOW,
                in.kernelFlags());
    }

    @Test
    void requestsTheKernelForbidsAreRefused() {
        GpioLineSettings in = GpioLineSettings.input().build();
        refused("no lines", () -> GpioRequestConfig.builder().build());
        refused("line offset 3 is given twice", () -> GpioRequestConfig.builder().lines(in, 3, 4, 3));
        refused("line offset -1 is negative", () -> GpioRequestConfig.builder().line(-1, in));
        GpioRequestConfig.Builder b = GpioRequestConfig.builder();
        for (int i = 0; i < 64; i++) {
            b.line(i, in);
        }
        assertEquals(64, b.build().lineCount());
        refused("more than 64 lines", () -> b.line(64, in));
        refused("consumer name", () -> GpioRequestConfig.builder().consumer("x".repeat(32)));
        refused("consumer name", () -> GpioRequestConfig.builder().consumer(""));
        assertEquals("x".repeat(31), GpioRequestConfig.builder().consumer("x".repeat(31)).line(0, in).build()
                .consumer());
        refused("event buffer size -1", () -> GpioRequestConfig.builder().eventBufferSize(-1));
        // 11 distinct debounce periods need 11 attributes; the kernel holds 10.
        GpioRequestConfig.Builder many = GpioRequestConfig.builder();
        for (int i = 0; i < 11; i++) {
            many.line(i, GpioLineSettings.input().debouncePeriodUs(100 + i).build());
        }
        refused("need 11 attributes", many::build);
    }

    private record Attr(int id, long value, long mask) {
    }

    private static List<Attr> attrs(MemorySegment cfg) {
        List<Attr> out = new ArrayList<>();
        for (int k = 0; k < cfg.get(JAVA_INT, GpioUapi.CONFIG_NUM_ATTRS); k++) {
            long base = GpioUapi.CONFIG_ATTRS + k * GpioUapi.CONFIG_ATTRIBUTE.byteSize();
            out.add(new Attr(cfg.get(JAVA_INT, base + GpioUapi.ATTR_ID), cfg.get(JAVA_LONG, base + GpioUapi.ATTR_VALUE),
                    cfg.get(JAVA_LONG, base + GpioUapi.CONFIG_ATTR_MASK)));
        }
        return out;
    }

    @Test
    void perLineSettingsAreEncodedByRequestIndex() {
        GpioLineSettings in = GpioLineSettings.input().edge(Edge.BOTH).build();
        GpioLineSettings slow = GpioLineSettings.input().edge(Edge.BOTH).debouncePeriodUs(5000).build();
        GpioLineSettings high = GpioLineSettings.output(true).build();
        GpioLineSettings low = GpioLineSettings.output(false).build();
        GpioLineSettings pulled = GpioLineSettings.input().bias(Bias.PULL_UP).build();
        // Offsets out of order: masks must name request indexes (0..4), not offsets.
        GpioRequestConfig c = GpioRequestConfig.builder().consumer("enc").line(12, in).line(1, high).line(7, slow)
                .line(9, low).line(3, in).line(5, pulled).eventBufferSize(99).build();
        MemorySegment cfg = c.encodedConfig();
        // The most common flag set (input, both edges: indexes 0, 2, 4) is the default.
        assertEquals(GpioUapi.FLAG_INPUT | GpioUapi.FLAG_EDGE_RISING | GpioUapi.FLAG_EDGE_FALLING,
                cfg.get(JAVA_LONG, GpioUapi.CONFIG_FLAGS));
        assertEquals(List.of(
                new Attr(GpioUapi.ATTR_ID_FLAGS, GpioUapi.FLAG_OUTPUT, 0b001010),
                new Attr(GpioUapi.ATTR_ID_FLAGS, GpioUapi.FLAG_INPUT | GpioUapi.FLAG_BIAS_PULL_UP, 0b100000),
                // The initial output values travel in the request: index 1 high, index 3 low.
                new Attr(GpioUapi.ATTR_ID_OUTPUT_VALUES, 0b000010, 0b001010),
                new Attr(GpioUapi.ATTR_ID_DEBOUNCE, 5000, 0b000100)), attrs(cfg));

        // And the request struct the ioctl gets carries exactly that.
        try (Arena a = Arena.ofConfined()) {
            MemorySegment req = a.allocate(GpioUapi.LINE_REQUEST);
            req.fill((byte) 0x5a); // writeRequest zeroes everything it does not set
            c.writeRequest(req);
            int[] offsets = {12, 1, 7, 9, 3, 5};
            for (int i = 0; i < 64; i++) {
                assertEquals(i < 6 ? offsets[i] : 0, req.get(JAVA_INT, GpioUapi.REQUEST_OFFSETS + 4L * i));
            }
            assertEquals("enc", GpioUapi.string(req, GpioUapi.REQUEST_CONSUMER, GpioUapi.NAME_SIZE));
            assertEquals(6, req.get(JAVA_INT, GpioUapi.REQUEST_NUM_LINES));
            assertEquals(99, req.get(JAVA_INT, GpioUapi.REQUEST_EVENT_BUFFER_SIZE));
            assertEquals(0, req.get(JAVA_INT, GpioUapi.REQUEST_FD));
            assertEquals(-1, MemorySegment.mismatch(cfg, 0, cfg.byteSize(), req, GpioUapi.REQUEST_CONFIG,
                    GpioUapi.REQUEST_CONFIG + cfg.byteSize()));
        }
    }

    @Test
    void uniformOutputsNeedOnlyTheValuesAttribute() {
        GpioRequestConfig c = GpioRequestConfig.builder().line(0, GpioLineSettings.output(true).build())
                .line(1, GpioLineSettings.output(true).build()).line(2, GpioLineSettings.output(false).build()).build();
        assertEquals(GpioUapi.FLAG_OUTPUT, c.encodedConfig().get(JAVA_LONG, GpioUapi.CONFIG_FLAGS));
        assertEquals(List.of(new Attr(GpioUapi.ATTR_ID_OUTPUT_VALUES, 0b011, 0b111)), attrs(c.encodedConfig()));
        // 64 lines, bit 63 included.
        GpioRequestConfig.Builder b = GpioRequestConfig.builder();
        for (int i = 0; i < 64; i++) {
            b.line(i, GpioLineSettings.output(i == 63).build());
        }
        assertEquals(List.of(new Attr(GpioUapi.ATTR_ID_OUTPUT_VALUES, 1L << 63, -1L)), attrs(b.build().encodedConfig()));
    }

    @Test
    void lineInfoIsDecoded() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment info = a.allocate(GpioUapi.LINE_INFO);
            info.setString(GpioUapi.INFO_NAME, "A7");
            info.setString(GpioUapi.INFO_CONSUMER, "pump");
            info.set(JAVA_INT, GpioUapi.INFO_OFFSET, 7);
            info.set(JAVA_LONG, GpioUapi.INFO_FLAGS, GpioUapi.FLAG_USED | GpioUapi.FLAG_INPUT
                    | GpioUapi.FLAG_ACTIVE_LOW | GpioUapi.FLAG_BIAS_PULL_DOWN | GpioUapi.FLAG_EDGE_FALLING
                    | GpioUapi.FLAG_EVENT_CLOCK_REALTIME);
            info.set(JAVA_INT, GpioUapi.INFO_NUM_ATTRS, 1);
            info.set(JAVA_INT, GpioUapi.INFO_ATTRS + GpioUapi.ATTR_ID, GpioUapi.ATTR_ID_DEBOUNCE);
            info.set(JAVA_INT, GpioUapi.INFO_ATTRS + GpioUapi.ATTR_VALUE, 3000);
            assertEquals(new GpioLineInfo(7, "A7", "pump", true, Direction.INPUT, Bias.PULL_DOWN, Drive.PUSH_PULL, true,
                    Edge.FALLING, EventClock.REALTIME, 3000), GpioLineInfo.decode(info, 0));
        }
    }
}
