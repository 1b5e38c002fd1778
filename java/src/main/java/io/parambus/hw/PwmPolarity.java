package io.parambus.hw;

/** The polarity of a PWM output ({@link PwmState#polarity()}). */
public enum PwmPolarity {
    /** High for the duty cycle, then low for the rest of the period. */
    NORMAL,
    /** Low for the duty cycle, then high for the rest of the period. */
    INVERSED
}
