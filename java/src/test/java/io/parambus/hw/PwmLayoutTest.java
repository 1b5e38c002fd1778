package io.parambus.hw;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The PWM character device's struct and requests as PwmChardev declares them, against
 * java-uapi-layout's pwm section. The installed headers (Linux 6.1) have no
 * {@code <linux/pwm.h>} (it came with 6.13): the C side then compiles the 6.13 uAPI
 * written out (and the real header where one is installed), so what this checks is
 * the C compiler's layout of the struct and the kernel's {@code _IO/_IOWR/_IOW}
 * encoding against {@link Ioc} and the Java layout, not the header's text.
 */
class PwmLayoutTest {
    @Test
    void waveformAndRequestsAreTheUapis() throws Exception {
        UapiLayouts.assertSame("pwm", Map.ofEntries(
                Map.entry("pwmchip_waveform_size", PwmChardev.WAVEFORM.byteSize()),
                Map.entry("pwmchip_waveform_hwpwm", PwmChardev.HWPWM),
                Map.entry("pwmchip_waveform_period_length_ns", PwmChardev.PERIOD_LENGTH),
                Map.entry("pwmchip_waveform_duty_length_ns", PwmChardev.DUTY_LENGTH),
                Map.entry("pwmchip_waveform_duty_offset_ns", PwmChardev.DUTY_OFFSET),
                Map.entry("PWM_IOCTL_REQUEST", PwmChardev.REQUEST),
                Map.entry("PWM_IOCTL_FREE", PwmChardev.FREE),
                Map.entry("PWM_IOCTL_ROUNDWF", PwmChardev.ROUNDWF),
                Map.entry("PWM_IOCTL_GETWF", PwmChardev.GETWF),
                Map.entry("PWM_IOCTL_SETROUNDEDWF", PwmChardev.SETROUNDEDWF),
                Map.entry("PWM_IOCTL_SETEXACTWF", PwmChardev.SETEXACTWF)));
    }
}
