#include "base/pickle.hpp"

#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <vector>

namespace ddpctl {

namespace {

using Json = nlohmann::json;
using Node = std::shared_ptr<Json>;

// The opcodes a Flight Recorder dump uses (torch's pickler writes protocol
// 2; CPython's, which made the hand-written fixtures, the same), and the
// short forms of protocols 4 and 5.
enum Op : unsigned char {
  PROTO = 0x80,
  FRAME = 0x95,
  STOP = '.',
  MARK = '(',
  NONE = 'N',
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  BININT = 'J',
  BININT1 = 'K',
  BININT2 = 'M',
  LONG1 = 0x8a,
  BINFLOAT = 'G',
  BINUNICODE = 'X',
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  EMPTY_LIST = ']',
  APPEND = 'a',
  APPENDS = 'e',
  EMPTY_DICT = '}',
  SETITEM = 's',
  SETITEMS = 'u',
  EMPTY_TUPLE = ')',
  TUPLE = 't',
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  MEMOIZE = 0x94,
  BINGET = 'h',
  LONG_BINGET = 'j',
};

// Names of opcodes a dump never has, for the refusal.
std::string opcode_name(unsigned char op) {
  static const std::map<unsigned char, const char*> names = {
      {'c', "GLOBAL"},      {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"},     {'b', "BUILD"},    {0x81, "NEWOBJ"},
      {0x92, "NEWOBJ_EX"},  {'i', "INST"},          {'o', "OBJ"},        {'P', "PERSID"},   {'Q', "BINPERSID"},
      {'B', "BINBYTES"},    {'C', "SHORT_BINBYTES"}, {0x8e, "BINBYTES8"}, {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"},
      {'I', "INT"},         {'L', "LONG"},           {'F', "FLOAT"},     {'S', "STRING"},   {'V', "UNICODE"},
      {'T', "BINSTRING"},   {'U', "SHORT_BINSTRING"}, {'p', "PUT"},       {'g', "GET"},      {0x8b, "LONG4"},
      {0x90, "EMPTY_SET"},  {0x91, "FROZENSET"},    {0x8f, "ADDITEMS"},  {'0', "POP"},      {'1', "POP_MARK"},
      {'2', "DUP"},         {0x82, "EXT1"},         {0x83, "EXT2"},      {0x84, "EXT4"}};
  auto it = names.find(op);
  return it != names.end() ? it->second : fmt::format("0x{:02x}", op);
}

class PickleReader {
 public:
  explicit PickleReader(std::string_view data) : data_(data) {}

  Json run() {
    while (true) {
      size_t at = pos_;
      auto op = static_cast<unsigned char>(take(1)[0]);
      switch (op) {
        case PROTO:
          if (auto v = static_cast<unsigned char>(take(1)[0]); v < 2 || v > 5)
            fail(at, fmt::format("protocol {} (a Flight Recorder dump is protocol 2 to 5)", v));
          break;
        case FRAME: take(8); break;  // a length hint; the opcodes follow as usual
        case STOP: {
          if (stack_.size() != 1 || !marks_.empty()) fail(at, "STOP with an unfinished stack");
          return value_of(stack_.back());
        }
        case MARK: marks_.push_back(stack_.size()); break;
        case NONE: push(Json()); break;
        case NEWTRUE: push(true); break;
        case NEWFALSE: push(false); break;
        case BININT: push(static_cast<std::int32_t>(little(4))); break;
        case BININT1: push(little(1)); break;
        case BININT2: push(little(2)); break;
        case LONG1: push(long1(at)); break;
        case BINFLOAT: push(binfloat()); break;
        case BINUNICODE: push(text(little(4))); break;
        case SHORT_BINUNICODE: push(text(little(1))); break;
        case BINUNICODE8: push(text(little(8))); break;
        case EMPTY_LIST: push(Json::array()); break;
        case EMPTY_DICT: push(Json::object()); break;
        case EMPTY_TUPLE: push(Json::array()); break;
        case APPEND: {
          Json item = pop(at);
          container(at, false)->push_back(std::move(item));
          break;
        }
        case APPENDS: {
          std::vector<Json> items = pop_mark(at);
          Node list = container(at, false);
          for (auto& i : items) list->push_back(std::move(i));
          break;
        }
        case SETITEM: {
          Json value = pop(at), key = pop(at);
          set(at, container(at, true), std::move(key), std::move(value));
          break;
        }
        case SETITEMS: {
          std::vector<Json> items = pop_mark(at);
          if (items.size() % 2 != 0) fail(at, "SETITEMS with an odd number of items");
          Node dict = container(at, true);
          for (size_t i = 0; i < items.size(); i += 2) set(at, dict, std::move(items[i]), std::move(items[i + 1]));
          break;
        }
        case TUPLE: push(Json(pop_mark(at))); break;
        case TUPLE1:
        case TUPLE2:
        case TUPLE3: {
          size_t n = op - TUPLE1 + 1;
          std::vector<Json> items(n);
          for (size_t i = n; i-- > 0;) items[i] = pop(at);
          push(Json(std::move(items)));
          break;
        }
        case BINPUT: put(at, little(1)); break;
        case LONG_BINPUT: put(at, little(4)); break;
        case MEMOIZE: put(at, memo_.size()); break;
        case BINGET: get(at, little(1)); break;
        case LONG_BINGET: get(at, little(4)); break;
        default:
          fail(at, fmt::format("opcode {} is not one a Flight Recorder dump has (only dicts, lists, tuples, "
                               "strings, numbers, bools and None are read)",
                               opcode_name(op)));
      }
    }
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& why) const {
    throw PickleError(fmt::format("byte {}: {}", at, why));
  }

  std::string_view take(size_t n) {
    if (n > data_.size() - pos_)
      throw PickleError(fmt::format("truncated at byte {} of {} (no STOP): a dump still being written?", data_.size(),
                                    data_.size()));
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }

  unsigned long long little(size_t n) {
    std::string_view b = take(n);
    unsigned long long v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    return v;
  }

  // A two's complement integer of n little-endian bytes; more than 8 is refused.
  long long long1(size_t at) {
    auto n = static_cast<size_t>(static_cast<unsigned char>(take(1)[0]));
    if (n > 8) fail(at, fmt::format("an integer of {} bytes (at most 8 are read)", n));
    if (n == 0) return 0;
    unsigned long long v = little(n);
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ULL << (8 * n);
    return static_cast<long long>(v);
  }

  double binfloat() {
    std::string_view b = take(8);  // big-endian IEEE 754
    unsigned long long bits = 0;
    for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  std::string text(unsigned long long n) {
    if (n > data_.size()) take(data_.size() + 1);  // truncated
    return std::string(take(static_cast<size_t>(n)));
  }

  void push(Json v) { stack_.push_back(std::make_shared<Json>(std::move(v))); }

  // A memoized value is copied off the stack, so that a later BINGET of it
  // still finds it.
  static Json value_of(Node& n) { return n.use_count() > 1 ? *n : std::move(*n); }

  Json pop(size_t at) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail(at, "a pop from an empty stack");
    Json v = value_of(stack_.back());
    stack_.pop_back();
    return v;
  }

  std::vector<Json> pop_mark(size_t at) {
    if (marks_.empty()) fail(at, "no MARK before it");
    size_t from = marks_.back();
    marks_.pop_back();
    std::vector<Json> items;
    items.reserve(stack_.size() - from);
    for (size_t i = from; i < stack_.size(); i++) items.push_back(value_of(stack_[i]));
    stack_.resize(from);
    return items;
  }

  // The list or dict below: the same object the memo holds, so that a later
  // BINGET of it sees its items.
  Node container(size_t at, bool dict) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail(at, "no container on the stack");
    Node c = stack_.back();
    if (dict ? !c->is_object() : !c->is_array()) fail(at, dict ? "items set on a non-dict" : "items appended to a non-list");
    return c;
  }

  void set(size_t at, const Node& dict, Json key, Json value) {
    std::string k;
    if (key.is_string()) k = key.get<std::string>();
    else if (key.is_number_integer()) k = key.dump();
    else fail(at, "a dict key that is neither a string nor an int");
    (*dict)[k] = std::move(value);
  }

  void put(size_t at, unsigned long long index) {
    if (stack_.empty()) fail(at, "a memo of nothing");
    if (index > (1ULL << 24)) fail(at, fmt::format("memo index {}", index));
    memo_[index] = stack_.back();
  }

  void get(size_t at, unsigned long long index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail(at, fmt::format("memo {} was never stored", index));
    stack_.push_back(std::make_shared<Json>(*it->second));  // a copy: JSON has no references
  }

  std::string_view data_;
  size_t pos_ = 0;
  std::vector<Node> stack_;
  std::vector<size_t> marks_;
  std::map<unsigned long long, Node> memo_;
};

}  // namespace

nlohmann::json read_pickle(std::string_view data) { return PickleReader(data).run(); }

}  // namespace ddpctl
