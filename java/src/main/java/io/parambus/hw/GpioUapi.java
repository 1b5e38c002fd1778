package io.parambus.hw;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;

/**
 * The GPIO character device's uAPI v2 ({@code <linux/gpio.h>}), declared once: the
 * structs as {@link StructLayout}s, the offsets the GPIO classes use derived from them,
 * the flags and the ioctl request numbers. {@code GpioLayoutTest} checks every value
 * here against the C headers (tests/java/c/uapi-layout.c, section gpio).
 *
 * <p>The structs have one layout on every 64-bit architecture (the kernel pads them
 * explicitly and aligns every 64-bit field), so nothing here depends on the machine.
 */
final class GpioUapi {
    private GpioUapi() {
    }

    /** {@code GPIO_MAX_NAME_SIZE}: name, label and consumer arrays, NUL included. */
    static final int NAME_SIZE = 32;
    /** {@code GPIO_V2_LINES_MAX}: lines in one request (the masks are 64-bit). */
    static final int LINES_MAX = 64;
    /** {@code GPIO_V2_LINE_NUM_ATTRS_MAX}: attributes of one line config. */
    static final int NUM_ATTRS_MAX = 10;

    /** {@code enum gpio_v2_line_flag}. */
    static final long FLAG_USED = 1L << 0, FLAG_ACTIVE_LOW = 1L << 1, FLAG_INPUT = 1L << 2,
            FLAG_OUTPUT = 1L << 3, FLAG_EDGE_RISING = 1L << 4, FLAG_EDGE_FALLING = 1L << 5,
            FLAG_OPEN_DRAIN = 1L << 6, FLAG_OPEN_SOURCE = 1L << 7, FLAG_BIAS_PULL_UP = 1L << 8,
            FLAG_BIAS_PULL_DOWN = 1L << 9, FLAG_BIAS_DISABLED = 1L << 10,
            FLAG_EVENT_CLOCK_REALTIME = 1L << 11, FLAG_EVENT_CLOCK_HTE = 1L << 12;
    /** {@code enum gpio_v2_line_attr_id}. */
    static final int ATTR_ID_FLAGS = 1, ATTR_ID_OUTPUT_VALUES = 2, ATTR_ID_DEBOUNCE = 3;
    /** {@code enum gpio_v2_line_event_id}. */
    static final int EVENT_RISING_EDGE = 1, EVENT_FALLING_EDGE = 2;
    /** {@code enum gpio_v2_line_changed_type}. */
    static final int CHANGED_REQUESTED = 1, CHANGED_RELEASED = 2, CHANGED_CONFIG = 3;

    private static MemoryLayout chars(String name) {
        return MemoryLayout.sequenceLayout(NAME_SIZE, JAVA_BYTE).withName(name);
    }

    private static MemoryLayout ints(int n, String name) {
        return MemoryLayout.sequenceLayout(n, JAVA_INT).withName(name);
    }

    /** {@code struct gpiochip_info}. */
    static final StructLayout CHIP_INFO = MemoryLayout.structLayout(
            chars("name"), chars("label"), JAVA_INT.withName("lines"));

    /**
     * {@code struct gpio_v2_line_attribute}: the union of {@code flags}, {@code values}
     * (both u64) and {@code debounce_period_us} (u32, the union's first 4 bytes on a
     * little-endian machine) is one 64-bit field here.
     */
    static final StructLayout LINE_ATTRIBUTE = MemoryLayout.structLayout(
            JAVA_INT.withName("id"), JAVA_INT.withName("padding"), JAVA_LONG.withName("value"));

    /** {@code struct gpio_v2_line_config_attribute}. */
    static final StructLayout CONFIG_ATTRIBUTE = MemoryLayout.structLayout(
            LINE_ATTRIBUTE.withName("attr"), JAVA_LONG.withName("mask"));

    /** {@code struct gpio_v2_line_config}. */
    static final StructLayout LINE_CONFIG = MemoryLayout.structLayout(
            JAVA_LONG.withName("flags"), JAVA_INT.withName("num_attrs"), ints(5, "padding"),
            MemoryLayout.sequenceLayout(NUM_ATTRS_MAX, CONFIG_ATTRIBUTE).withName("attrs"));

    /** {@code struct gpio_v2_line_request}. */
    static final StructLayout LINE_REQUEST = MemoryLayout.structLayout(
            ints(LINES_MAX, "offsets"), chars("consumer"), LINE_CONFIG.withName("config"),
            JAVA_INT.withName("num_lines"), JAVA_INT.withName("event_buffer_size"), ints(5, "padding"),
            JAVA_INT.withName("fd"));

    /** {@code struct gpio_v2_line_info}. */
    static final StructLayout LINE_INFO = MemoryLayout.structLayout(
            chars("name"), chars("consumer"), JAVA_INT.withName("offset"), JAVA_INT.withName("num_attrs"),
            JAVA_LONG.withName("flags"),
            MemoryLayout.sequenceLayout(NUM_ATTRS_MAX, LINE_ATTRIBUTE).withName("attrs"), ints(4, "padding"));

    /** {@code struct gpio_v2_line_info_changed}. */
    static final StructLayout LINE_INFO_CHANGED = MemoryLayout.structLayout(
            LINE_INFO.withName("info"), JAVA_LONG.withName("timestamp_ns"), JAVA_INT.withName("event_type"),
            ints(5, "padding"));

    /** {@code struct gpio_v2_line_values}. */
    static final StructLayout LINE_VALUES = MemoryLayout.structLayout(
            JAVA_LONG.withName("bits"), JAVA_LONG.withName("mask"));

    /** {@code struct gpio_v2_line_event}: 48 bytes, read in batches straight from the request's descriptor. */
    static final StructLayout LINE_EVENT = MemoryLayout.structLayout(
            JAVA_LONG.withName("timestamp_ns"), JAVA_INT.withName("id"), JAVA_INT.withName("offset"),
            JAVA_INT.withName("seqno"), JAVA_INT.withName("line_seqno"), ints(6, "padding"));

    private static long off(StructLayout l, String... path) {
        MemoryLayout.PathElement[] p = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            p[i] = groupElement(path[i]);
        }
        return l.byteOffset(p);
    }

    static final long CHIP_INFO_NAME = off(CHIP_INFO, "name"), CHIP_INFO_LABEL = off(CHIP_INFO, "label"),
            CHIP_INFO_LINES = off(CHIP_INFO, "lines");
    static final long ATTR_ID = off(LINE_ATTRIBUTE, "id"), ATTR_VALUE = off(LINE_ATTRIBUTE, "value");
    static final long CONFIG_ATTR_ATTR = off(CONFIG_ATTRIBUTE, "attr"), CONFIG_ATTR_MASK = off(CONFIG_ATTRIBUTE, "mask");
    static final long CONFIG_FLAGS = off(LINE_CONFIG, "flags"), CONFIG_NUM_ATTRS = off(LINE_CONFIG, "num_attrs"),
            CONFIG_ATTRS = off(LINE_CONFIG, "attrs");
    static final long REQUEST_OFFSETS = off(LINE_REQUEST, "offsets"), REQUEST_CONSUMER = off(LINE_REQUEST, "consumer"),
            REQUEST_CONFIG = off(LINE_REQUEST, "config"), REQUEST_NUM_LINES = off(LINE_REQUEST, "num_lines"),
            REQUEST_EVENT_BUFFER_SIZE = off(LINE_REQUEST, "event_buffer_size"), REQUEST_FD = off(LINE_REQUEST, "fd");
    static final long INFO_NAME = off(LINE_INFO, "name"), INFO_CONSUMER = off(LINE_INFO, "consumer"),
            INFO_OFFSET = off(LINE_INFO, "offset"), INFO_NUM_ATTRS = off(LINE_INFO, "num_attrs"),
            INFO_FLAGS = off(LINE_INFO, "flags"), INFO_ATTRS = off(LINE_INFO, "attrs");
    static final long CHANGED_INFO = off(LINE_INFO_CHANGED, "info"),
            CHANGED_TIMESTAMP = off(LINE_INFO_CHANGED, "timestamp_ns"),
            CHANGED_EVENT_TYPE = off(LINE_INFO_CHANGED, "event_type");
    static final long VALUES_BITS = off(LINE_VALUES, "bits"), VALUES_MASK = off(LINE_VALUES, "mask");
    static final long EVENT_SIZE = LINE_EVENT.byteSize();
    static final long EVENT_TIMESTAMP = off(LINE_EVENT, "timestamp_ns"), EVENT_ID = off(LINE_EVENT, "id"),
            EVENT_OFFSET = off(LINE_EVENT, "offset"), EVENT_SEQNO = off(LINE_EVENT, "seqno"),
            EVENT_LINE_SEQNO = off(LINE_EVENT, "line_seqno");

    private static final int TYPE = 0xB4;
    static final long GET_CHIPINFO = Ioc.ior(TYPE, 0x01, CHIP_INFO.byteSize());
    static final long GET_LINEINFO_UNWATCH = Ioc.iowr(TYPE, 0x0C, JAVA_INT.byteSize());
    static final long V2_GET_LINEINFO = Ioc.iowr(TYPE, 0x05, LINE_INFO.byteSize());
    static final long V2_GET_LINEINFO_WATCH = Ioc.iowr(TYPE, 0x06, LINE_INFO.byteSize());
    static final long V2_GET_LINE = Ioc.iowr(TYPE, 0x07, LINE_REQUEST.byteSize());
    static final long V2_LINE_SET_CONFIG = Ioc.iowr(TYPE, 0x0D, LINE_CONFIG.byteSize());
    static final long V2_LINE_GET_VALUES = Ioc.iowr(TYPE, 0x0E, LINE_VALUES.byteSize());
    static final long V2_LINE_SET_VALUES = Ioc.iowr(TYPE, 0x0F, LINE_VALUES.byteSize());
    /** {@code FIONBIO} (asm-generic, the same on x86-64, arm64, riscv64): makes any descriptor non-blocking. */
    static final long FIONBIO = 0x5421;

    /** errno values the GPIO classes test for (asm-generic). */
    static final int EIO = 5, EBADF = 9, ENODEV = 19, ENOENT = 2;

    /** A NUL-terminated string of at most {@code max} bytes at {@code offset} (UTF-8; the kernel's are ASCII). */
    static String string(MemorySegment s, long offset, int max) {
        int n = 0;
        while (n < max && s.get(JAVA_BYTE, offset + n) != 0) {
            n++;
        }
        byte[] b = new byte[n];
        MemorySegment.copy(s, JAVA_BYTE, offset, b, 0, n);
        return new String(b, StandardCharsets.UTF_8);
    }
}
