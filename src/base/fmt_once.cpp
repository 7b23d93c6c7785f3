// fmt's implementation, compiled once for the whole program. ddpctl must need
// nothing but the C library on the nodes (DDPCTL_LIBC_ONLY), and Debian ships
// fmt only as a shared library; fmt's header-only mode would do, but it
// compiles the implementation into every file that formats (about 40% of
// each file's compile time here). So the core is compiled against fmt's
// ordinary headers and this file supplies what libfmt.so would: the
// non-template functions of format-inl.h, and the templates format.h
// declares `extern` (the locale and float-to-decimal ones). Written for fmt
// 9 (Debian 12); CMakeLists.txt uses header-only fmt with any other version.
// No header of its own, and none needed: it declares nothing of ddpctl's;
// what it defines, fmt's headers declare. It is not in the core either: it
// is the library ddpctl_fmt (CMakeLists.txt), built only for the portable
// build (DDPCTL_LIBC_ONLY) with fmt 9.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;
template auto dragonbox::to_decimal(float) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale&);
template auto locale_ref::get<std::locale>() const -> std::locale;
}  // namespace detail
FMT_END_NAMESPACE
