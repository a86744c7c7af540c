package example;
import org.junit.jupiter.api.*;
import static org.junit.jupiter.api.Assertions.*;
class SampleTest {
  @Test void passes() { assertEquals(2, 1 + 1); }
  @Test void fails() { assertEquals(3, 1 + 1, "arithmetic"); }
  @Test void errors() { throw new IllegalStateException("boom"); }
  @Disabled("needs a GPU") @Test void disabled() {}
}
