// Numbers as the commands print them, one way: the health sweep's table, drain reasons, heat map
// and messages all round a bandwidth alike.
#pragma once

#include <string>

namespace gpudirect::launcher {

// Three significant digits ("%.3g": 187, 0.41, 1.2e+03): bandwidths, thresholds and seconds in
// tables, reasons and messages.
std::string short_number(double value);

// Every digit that matters ("%g": 2, 1.5, 300): a value passed on to another command line.
std::string plain_number(double value);

}  // namespace gpudirect::launcher
