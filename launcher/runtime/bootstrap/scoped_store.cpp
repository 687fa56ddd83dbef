// Store::scoped: a prefix in front of every key and name, everything else forwarded, so each user
// of the rendezvous has its own namespace on one connection.
#include "bootstrap/store.hpp"

namespace gpudirect::bootstrap {
namespace {

class ScopedStore final : public Store {
 public:
  ScopedStore(Store& base, std::string prefix) : base_(base), prefix_(std::move(prefix) + "/") {}

  void set(const std::string& key, const std::string& value) override { base_.set(prefix_ + key, value); }
  std::string get(const std::string& key) override { return base_.get(prefix_ + key); }
  void barrier(const std::string& name) override { base_.barrier(prefix_ + name); }
  std::vector<std::string> all_gather(const std::string& name, const std::string& value) override {
    return base_.all_gather(prefix_ + name, value);
  }
  void abort(const std::string& reason) override { base_.abort(reason); }
  std::shared_ptr<AbortSignal> abort_signal() override { return base_.abort_signal(); }

 private:
  Store& base_;
  std::string prefix_;
};

}  // namespace

std::unique_ptr<Store> Store::scoped(const std::string& prefix) {
  if (prefix.empty() || prefix.find('/') != std::string::npos)
    throw std::invalid_argument("Store::scoped(\"" + prefix + "\"): the prefix must be one non-empty name without '/'");
  return std::make_unique<ScopedStore>(*this, prefix);
}

}  // namespace gpudirect::bootstrap
