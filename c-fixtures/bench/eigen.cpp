// Template-heavy C++: Eigen dense algebra (products, LU and QR solves, a symmetric eigen
// decomposition) and a sparse CG solve, on fixed seeds. `eigen [SCALE]` (default 4: about a
// second plain) repeats each SCALE times ten and five.
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cstdio>
#include <cstdlib>
#include <vector>

static double dense(int n, int reps) {
    std::srand(42);
    double acc = 0;
    for (int r = 0; r < reps; r++) {
        Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n);
        Eigen::MatrixXd s = a * a.transpose() + Eigen::MatrixXd::Identity(n, n) * n;
        Eigen::VectorXd b = Eigen::VectorXd::Random(n);
        acc += s.partialPivLu().solve(b).sum();
        acc += a.householderQr().solve(b).norm();
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(s);
        acc += es.eigenvalues().maxCoeff();
    }
    return acc;
}

static double sparse(int n, int reps) {
    double acc = 0;
    for (int r = 0; r < reps; r++) {
        std::vector<Eigen::Triplet<double>> t;
        for (int i = 0; i < n; i++) {
            t.emplace_back(i, i, 4.0);
            if (i > 0) t.emplace_back(i, i - 1, -1.0);
            if (i + 1 < n) t.emplace_back(i, i + 1, -1.0);
        }
        Eigen::SparseMatrix<double> m(n, n);
        m.setFromTriplets(t.begin(), t.end());
        Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
        Eigen::ConjugateGradient<Eigen::SparseMatrix<double>> cg(m);
        acc += cg.solve(b).sum();
    }
    return acc;
}

int main(int argc, char **argv) {
    int scale = argc > 1 ? std::atoi(argv[1]) : 4;
    double d = dense(120, 10 * scale);
    double s = sparse(200000, 5 * scale);
    std::printf("%.6e %.6e\n", d, s);
    return 0;
}
