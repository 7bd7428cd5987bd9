#include "ledger.hpp"

#include <cstdio>
#include <thread>
#include <vector>

template <typename T> T sum_of(const std::vector<T> &values) {
  T sum{};
  for (const T &v : values)
    sum += v;
  return sum;
}

int main() {
  Ledger ledger;
  for (int id = 0; id < 4; id++)
    ledger.open(id, 100);
  try {
    ledger.transfer(0, 1, 1000);
  } catch (const overdraft &refusal) {
    std::printf("refused: %s\n", refusal.what());
  }
  // Transfers are refused or not depending on the interleaving, so only totals are printed:
  // money is conserved whatever the order.
  std::vector<long> refused(4, 0);
  std::vector<std::thread> tellers;
  for (int t = 0; t < 4; t++)
    tellers.emplace_back(run_teller, std::ref(ledger), t, 1000, std::ref(refused[t]));
  for (auto &teller : tellers)
    teller.join();
  std::printf("total %ld after %d transfers\n", ledger.total(), 4 * 1000);
  std::printf("accounts %zu, sum_of<int> %d\n", ledger.balances().size(), sum_of(std::vector<int>{1, 2, 3}));
  return sum_of(refused) >= 0 ? 0 : 1;
}
