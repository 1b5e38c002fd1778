package io.parambus.hw;

/** How a serial port holds back the other side when its input is full ({@link UartConfig#flowControl()}). */
public enum UartFlowControl {
    /** None: bytes that arrive while the input buffer is full are lost. */
    NONE,
    /** Hardware flow control on the RTS and CTS lines ({@code CRTSCTS}). */
    RTS_CTS,
    /** Software flow control with XON/XOFF characters in both directions ({@code IXON | IXOFF}). */
    XON_XOFF
}
