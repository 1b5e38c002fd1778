package io.parambus.hw;

import static io.parambus.hw.GpioUapi.*;

import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every struct size, field offset, flag, attribute id and ioctl request number the GPIO
 * classes declare (GpioUapi) is {@code <linux/gpio.h>}'s, as the C compiler sees it
 * (java-uapi-layout gpio).
 */
class GpioLayoutTest {
    @Test
    void gpioUapiIsTheKernelHeaders() throws Exception {
        Map<String, Long> j = new HashMap<>();
        j.put("GPIO_MAX_NAME_SIZE", (long) NAME_SIZE);
        j.put("GPIO_V2_LINES_MAX", (long) LINES_MAX);
        j.put("GPIO_V2_LINE_NUM_ATTRS_MAX", (long) NUM_ATTRS_MAX);
        j.put("gpiochip_info_size", CHIP_INFO.byteSize());
        j.put("gpiochip_info_name", CHIP_INFO_NAME);
        j.put("gpiochip_info_label", CHIP_INFO_LABEL);
        j.put("gpiochip_info_lines", CHIP_INFO_LINES);
        j.put("gpio_v2_line_attribute_size", LINE_ATTRIBUTE.byteSize());
        j.put("gpio_v2_line_attribute_id", ATTR_ID);
        // The union: flags, values and debounce_period_us all start at ATTR_VALUE.
        j.put("gpio_v2_line_attribute_flags", ATTR_VALUE);
        j.put("gpio_v2_line_attribute_values", ATTR_VALUE);
        j.put("gpio_v2_line_attribute_debounce_period_us", ATTR_VALUE);
        j.put("gpio_v2_line_config_attribute_size", CONFIG_ATTRIBUTE.byteSize());
        j.put("gpio_v2_line_config_attribute_attr", CONFIG_ATTR_ATTR);
        j.put("gpio_v2_line_config_attribute_mask", CONFIG_ATTR_MASK);
        j.put("gpio_v2_line_config_size", LINE_CONFIG.byteSize());
        j.put("gpio_v2_line_config_flags", CONFIG_FLAGS);
        j.put("gpio_v2_line_config_num_attrs", CONFIG_NUM_ATTRS);
        j.put("gpio_v2_line_config_attrs", CONFIG_ATTRS);
        j.put("gpio_v2_line_request_size", LINE_REQUEST.byteSize());
        j.put("gpio_v2_line_request_offsets", REQUEST_OFFSETS);
        j.put("gpio_v2_line_request_consumer", REQUEST_CONSUMER);
        j.put("gpio_v2_line_request_config", REQUEST_CONFIG);
        j.put("gpio_v2_line_request_num_lines", REQUEST_NUM_LINES);
        j.put("gpio_v2_line_request_event_buffer_size", REQUEST_EVENT_BUFFER_SIZE);
        j.put("gpio_v2_line_request_fd", REQUEST_FD);
        j.put("gpio_v2_line_info_size", LINE_INFO.byteSize());
        j.put("gpio_v2_line_info_name", INFO_NAME);
        j.put("gpio_v2_line_info_consumer", INFO_CONSUMER);
        j.put("gpio_v2_line_info_offset", INFO_OFFSET);
        j.put("gpio_v2_line_info_num_attrs", INFO_NUM_ATTRS);
        j.put("gpio_v2_line_info_flags", INFO_FLAGS);
        j.put("gpio_v2_line_info_attrs", INFO_ATTRS);
        j.put("gpio_v2_line_info_changed_size", LINE_INFO_CHANGED.byteSize());
        j.put("gpio_v2_line_info_changed_info", CHANGED_INFO);
        j.put("gpio_v2_line_info_changed_timestamp_ns", CHANGED_TIMESTAMP);
        j.put("gpio_v2_line_info_changed_event_type", CHANGED_EVENT_TYPE);
        j.put("gpio_v2_line_values_size", LINE_VALUES.byteSize());
        j.put("gpio_v2_line_values_bits", VALUES_BITS);
        j.put("gpio_v2_line_values_mask", VALUES_MASK);
        j.put("gpio_v2_line_event_size", EVENT_SIZE);
        j.put("gpio_v2_line_event_timestamp_ns", EVENT_TIMESTAMP);
        j.put("gpio_v2_line_event_id", EVENT_ID);
        j.put("gpio_v2_line_event_offset", EVENT_OFFSET);
        j.put("gpio_v2_line_event_seqno", EVENT_SEQNO);
        j.put("gpio_v2_line_event_line_seqno", EVENT_LINE_SEQNO);
        j.put("GPIO_V2_LINE_FLAG_USED", FLAG_USED);
        j.put("GPIO_V2_LINE_FLAG_ACTIVE_LOW", FLAG_ACTIVE_LOW);
        j.put("GPIO_V2_LINE_FLAG_INPUT", FLAG_INPUT);
        j.put("GPIO_V2_LINE_FLAG_OUTPUT", FLAG_OUTPUT);
        j.put("GPIO_V2_LINE_FLAG_EDGE_RISING", FLAG_EDGE_RISING);
        j.put("GPIO_V2_LINE_FLAG_EDGE_FALLING", FLAG_EDGE_FALLING);
        j.put("GPIO_V2_LINE_FLAG_OPEN_DRAIN", FLAG_OPEN_DRAIN);
        j.put("GPIO_V2_LINE_FLAG_OPEN_SOURCE", FLAG_OPEN_SOURCE);
        j.put("GPIO_V2_LINE_FLAG_BIAS_PULL_UP", FLAG_BIAS_PULL_UP);
        j.put("GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN", FLAG_BIAS_PULL_DOWN);
        j.put("GPIO_V2_LINE_FLAG_BIAS_DISABLED", FLAG_BIAS_DISABLED);
        j.put("GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME", FLAG_EVENT_CLOCK_REALTIME);
        j.put("GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE", FLAG_EVENT_CLOCK_HTE);
        j.put("GPIO_V2_LINE_ATTR_ID_FLAGS", (long) ATTR_ID_FLAGS);
        j.put("GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES", (long) ATTR_ID_OUTPUT_VALUES);
        j.put("GPIO_V2_LINE_ATTR_ID_DEBOUNCE", (long) ATTR_ID_DEBOUNCE);
        j.put("GPIO_V2_LINE_EVENT_RISING_EDGE", (long) EVENT_RISING_EDGE);
        j.put("GPIO_V2_LINE_EVENT_FALLING_EDGE", (long) EVENT_FALLING_EDGE);
        j.put("GPIO_V2_LINE_CHANGED_REQUESTED", (long) CHANGED_REQUESTED);
        j.put("GPIO_V2_LINE_CHANGED_RELEASED", (long) CHANGED_RELEASED);
        j.put("GPIO_V2_LINE_CHANGED_CONFIG", (long) CHANGED_CONFIG);
        j.put("GPIO_GET_CHIPINFO_IOCTL", GET_CHIPINFO);
        j.put("GPIO_GET_LINEINFO_UNWATCH_IOCTL", GET_LINEINFO_UNWATCH);
        j.put("GPIO_V2_GET_LINEINFO_IOCTL", V2_GET_LINEINFO);
        j.put("GPIO_V2_GET_LINEINFO_WATCH_IOCTL", V2_GET_LINEINFO_WATCH);
        j.put("GPIO_V2_GET_LINE_IOCTL", V2_GET_LINE);
        j.put("GPIO_V2_LINE_SET_CONFIG_IOCTL", V2_LINE_SET_CONFIG);
        j.put("GPIO_V2_LINE_GET_VALUES_IOCTL", V2_LINE_GET_VALUES);
        j.put("GPIO_V2_LINE_SET_VALUES_IOCTL", V2_LINE_SET_VALUES);
        j.put("FIONBIO", FIONBIO);
        UapiLayouts.assertSame("gpio", j);
    }

    /** The edge event buffer is an array of the kernel's records, back to back. */
    @Test
    void eventBufferHoldsWholeKernelRecords() {
        try (GpioEventBuffer b = new GpioEventBuffer(5)) {
            org.junit.jupiter.api.Assertions.assertEquals(5 * 48, b.segment().byteSize());
            org.junit.jupiter.api.Assertions.assertEquals(0, b.segment().address() % ValueLayout.JAVA_LONG.byteSize());
        }
    }
}
