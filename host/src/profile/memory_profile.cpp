// SPDX-License-Identifier: Apache-2.0
#include "tpuemu/profile/memory_profile.h"

#include <charconv>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "pprof_profile.pb.h"
#include "tpuemu/base/error.h"

namespace tpuemu::profile {

std::string_view buffer_kind(std::string_view owner) {
  if (owner.find("weights") != std::string_view::npos) return "weight";
  if (owner == "program") return "program";
  if (owner.starts_with("input") || owner.find("output") != std::string_view::npos ||
      owner.find("activation") != std::string_view::npos)
    return "activation";
  return "scratch";
}

std::string buffer_layer(std::string_view owner) {
  if (owner.starts_with("layer ")) {
    const auto end = owner.find(' ', 6);
    return std::string(owner.substr(0, end));
  }
  if (owner.starts_with("request ")) {  // serving traces: "request 3 conv1.patches"
    const auto second = owner.find(' ', 8);
    return std::string(owner.substr(0, second));
  }
  return std::string(owner.substr(0, owner.find(' ')));
}

ProfileMoment ProfileMoment::parse(std::string_view text) {
  if (text == "peak") return {};
  if (text == "end") return {Kind::End, 0};
  std::uint64_t t = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw Error("--profile-at", fmt::format("'{}' is not peak, end or a time (a non-negative integer)", text));
  return {Kind::Time, t};
}

void check_moment(const alloc::AllocTrace& trace, const ProfileMoment& moment) {
  if (moment.kind != ProfileMoment::Kind::Time) return;
  const std::uint64_t last = trace.events.empty() ? 0 : trace.events.back().time;
  if (moment.time > last) {
    throw Error(fmt::format("--profile-at {}", moment.time),
                fmt::format("after the end of the run (its last allocation event is at cycle {}): the profile would be "
                            "empty; give a cycle up to {}, peak or end", last, last));
  }
}

MemorySnapshot snapshot_at(const alloc::AllocTrace& trace, const ProfileMoment& moment) {
  check_moment(trace, moment);
  // Replays the events in order; a moment's state is the one after every event at its time.
  std::map<std::string, LiveBuffer> live;  // key: space + '\0' + id
  std::vector<std::string> order;          // allocation order of the keys
  std::uint64_t bytes = 0;
  MemorySnapshot best;
  auto capture = [&](std::uint64_t time) {
    MemorySnapshot s;
    s.time = time;
    s.live_bytes = bytes;
    for (const std::string& k : order) {
      if (const auto it = live.find(k); it != live.end()) s.buffers.push_back(it->second);
    }
    return s;
  };
  const auto& ev = trace.events;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const alloc::TraceEvent& e = ev[i];
    if (moment.kind == ProfileMoment::Kind::Time && e.time > moment.time) return capture(moment.time);
    const std::string key = e.space + '\0' + e.id;
    if (e.alloc) {
      live[key] = LiveBuffer{e.space, e.id, e.owner.empty() ? e.id : e.owner, e.size, e.time};
      order.push_back(key);
      bytes += e.size;
    } else if (const auto it = live.find(key); it != live.end()) {
      bytes -= it->second.size;
      live.erase(it);
    }
    const bool last_at_time = i + 1 == ev.size() || ev[i + 1].time != e.time;
    if (moment.kind == ProfileMoment::Kind::Peak && last_at_time && bytes > best.live_bytes) best = capture(e.time);
  }
  if (moment.kind == ProfileMoment::Kind::Peak) return best;
  return capture(moment.kind == ProfileMoment::Kind::Time ? moment.time : (ev.empty() ? 0 : ev.back().time));
}

namespace {

// pprof's string table: index 0 is "", every string once.
class Strings {
 public:
  explicit Strings(pprof::Profile& p) : p_(p) { (void)id(""); }
  std::int64_t id(const std::string& s) {
    const auto [it, added] = ids_.try_emplace(s, static_cast<std::int64_t>(p_.string_table_size()));
    if (added) p_.add_string_table(s);
    return it->second;
  }

 private:
  pprof::Profile& p_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

}  // namespace

std::string stack_profile(const std::vector<StackSample>& samples, const std::string& comment) {
  pprof::Profile p;
  Strings str(p);
  for (const auto& [type, unit] : {std::pair{"allocations", "count"}, std::pair{"space", "bytes"}}) {
    pprof::ValueType* v = p.add_sample_type();
    v->set_type(str.id(type));
    v->set_unit(str.id(unit));
  }
  p.set_default_sample_type(str.id("space"));
  // One function and location per frame name.
  std::unordered_map<std::string, std::uint64_t> location_of;
  auto location = [&](const std::string& frame) {
    const auto [it, added] = location_of.try_emplace(frame, location_of.size() + 1);
    if (added) {
      pprof::Function* f = p.add_function();
      f->set_id(it->second);
      f->set_name(str.id(frame));
      f->set_system_name(str.id(frame));
      pprof::Location* l = p.add_location();
      l->set_id(it->second);
      l->add_line()->set_function_id(it->second);
    }
    return it->second;
  };
  for (const StackSample& sample : samples) {
    pprof::Sample* s = p.add_sample();
    for (const std::string& frame : sample.frames) s->add_location_id(location(frame));
    s->add_value(1);
    s->add_value(static_cast<std::int64_t>(sample.bytes));
    for (const auto& [key, value] : sample.labels) {
      pprof::Label* l = s->add_label();
      l->set_key(str.id(key));
      l->set_str(str.id(value));
    }
    for (const StackSample::Number& n : sample.numbers) {
      pprof::Label* l = s->add_label();
      l->set_key(str.id(n.key));
      l->set_num(n.value);
      l->set_num_unit(str.id(n.unit));
    }
  }
  p.add_comment(str.id(comment));

  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream gz(&raw, options);
    if (!p.SerializeToZeroCopyStream(&gz) || !gz.Close()) throw Error("memory profile", "cannot encode the pprof profile");
  }
  return out;
}

std::string memory_profile(const MemorySnapshot& snapshot, std::string_view model) {
  const std::string root(model);
  std::vector<StackSample> samples;
  samples.reserve(snapshot.buffers.size());
  for (const LiveBuffer& b : snapshot.buffers) {
    const std::string layer = buffer_layer(b.owner);
    StackSample s;
    s.frames = {fmt::format("{} [{}]", b.owner, b.id), fmt::format("{}/{}", root, layer), root};  // leaf first
    s.bytes = b.size;
    s.labels = {{"space", b.space}, {"buffer", b.id}, {"layer", layer}, {"kind", std::string(buffer_kind(b.owner))}};
    s.numbers = {{"allocated_at", static_cast<std::int64_t>(b.allocated_at), "cycles"}};
    samples.push_back(std::move(s));
  }
  return stack_profile(samples, fmt::format("tpuemu device memory at time {} ({} live bytes)", snapshot.time, snapshot.live_bytes));
}

}  // namespace tpuemu::profile
