package io.parambus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The type, status and update-class codes against docs/segment-format.md §2.2, §2.5, §2.6. */
class TypesTest {
    @Test
    void everyValidCodeHasItsTypeAndNoOtherHasOne() {
        int valid = 0;
        for (int code = 0; code < 256; code++) {
            ParamType t = ParamType.ofCode(code);
            boolean expected = (code >= 1 && code <= 14) || (code >= 0x81 && code <= 0x8B);
            assertEquals(expected, t != null, "code " + code);
            if (t != null) {
                valid++;
                assertEquals(code, t.code());
                assertEquals(code >= 0x80, t.isArray());
            }
        }
        assertEquals(25, valid);
        assertNull(ParamType.ofCode(-1));
        assertNull(ParamType.ofCode(0x8C));
    }

    @Test
    void arraysNameTheirElements() {
        assertSame(ParamType.DOUBLE, ParamType.DOUBLE_ARRAY.element());
        assertEquals(8, ParamType.DOUBLE_ARRAY.elementSize());
        assertEquals("uint8[]", ParamType.UINT8_ARRAY.spelling());
        assertTrue(ParamType.UINT64_ARRAY.isUnsignedInteger());
        assertTrue(ParamType.ENUM.isSignedInteger());
        assertFalse(ParamType.STRING.isFloating());
    }

    @Test
    void statusAboveThreeReadsAsInvalid() {
        assertSame(Status.MAJOR, Status.ofCode(2));
        assertSame(Status.INVALID, Status.ofCode(200));
        assertEquals("minor", Status.MINOR.label());
        assertSame(UpdateClass.LIVE, UpdateClass.ofCode(3));
        assertNull(UpdateClass.ofCode(4));
    }
}
