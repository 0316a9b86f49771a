#include "main_window.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <random>

#include "section_view.h"

namespace {

// Gaussian noise at `snr_db` below the section's mean power (fixed seed: every run the same).
std::vector<float> with_noise(const std::vector<float> &clean, double snr_db) {
    std::vector<float> noisy(clean);
    if (snr_db <= 0.0) {
        return noisy;
    }
    double power = 0.0;
    for (float v : clean) {
        power += double(v) * v;
    }
    power /= double(clean.size());
    std::mt19937 rng(20140703);
    std::normal_distribution<double> gauss(0.0, std::sqrt(power / std::pow(10.0, snr_db / 10)));
    for (float &v : noisy) {
        v += float(gauss(rng));
    }
    return noisy;
}

// DWT shrinkage of the traces (padded by even reflection to a power of two) with
// Daubechies 8, thresholding only the finest level: above 62.5 Hz at 4 ms, where this
// section holds little signal.
std::vector<float> dwt_denoise(const seisgpu::context &ctx, const Section &s,
                               const std::vector<float> &in) {
    std::size_t n = 2;
    while (n < s.n_samples) {
        n *= 2;
    }
    std::vector<float> padded(s.n_traces * n), out(padded.size());
    for (std::size_t t = 0; t < s.n_traces; ++t) {
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t j = i < s.n_samples ? i : 2 * (s.n_samples - 1) - i;
            padded[t * n + i] = in[t * s.n_samples + std::min(j, s.n_samples - 1)];
        }
    }
    seisgpu::dwt_plan plan(ctx, SG_WAVELET_DAUBECHIES, 8, n);
    sg_dwt_denoise_options o = sg_dwt_denoise_options_default();
    o.level_mask = 1;
    plan.denoise(o, padded, out);
    std::vector<float> result(in.size());
    for (std::size_t t = 0; t < s.n_traces; ++t) {
        std::copy_n(out.begin() + std::ptrdiff_t(t * n), s.n_samples,
                    result.begin() + std::ptrdiff_t(t * s.n_samples));
    }
    return result;
}

std::vector<float> fx_decon(const seisgpu::context &ctx, const Section &s,
                            const std::vector<float> &in) {
    sg_fxdecon_options o = sg_fxdecon_options_default();
    o.sample_interval_s = s.dt_s;
    auto plan = seisgpu::fxdecon_plan::section(ctx, o, s.n_samples, s.n_traces);
    std::vector<float> out;
    plan.execute_2d(in, out);
    return out;
}

} // namespace

MainWindow::MainWindow(Section section, const QString &file_name)
    : section_(std::move(section)), ctx_(SG_BACKEND_AUTO) {
    setWindowTitle(tr("seisgpu: %1").arg(file_name));
    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    auto *controls = new QHBoxLayout;
    method_ = new QComboBox;
    method_->addItem(tr("DWT denoising (Daubechies 8)"), "dwt");
    method_->addItem(tr("F-X deconvolution"), "fx");
    noise_ = new QDoubleSpinBox;
    noise_->setRange(0.0, 40.0);
    noise_->setValue(5.0);
    noise_->setSuffix(tr(" dB"));
    noise_->setSpecialValueText(tr("none"));
    run_button_ = new QPushButton(tr("Run"));
    cancel_button_ = new QPushButton(tr("Cancel"));
    cancel_button_->setEnabled(false);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    controls->addWidget(new QLabel(tr("Method:")));
    controls->addWidget(method_);
    controls->addWidget(new QLabel(tr("Added noise, SNR:")));
    controls->addWidget(noise_);
    controls->addWidget(run_button_);
    controls->addWidget(cancel_button_);
    controls->addWidget(progress_, 1);
    layout->addLayout(controls);
    auto *panels = new QHBoxLayout;
    before_ = new SectionView(tr("Before"));
    after_ = new SectionView(tr("After"));
    removed_ = new SectionView(tr("Removed (before - after)"));
    panels->addWidget(before_);
    panels->addWidget(after_);
    panels->addWidget(removed_);
    layout->addLayout(panels, 1);
    setCentralWidget(central);

    const std::string description = ctx_.describe();
    // "backend: CPU; CPU chosen automatically: …" or "backend: CUDA; <device>".
    const QString status =
        QString::fromStdString(description).split('\n').mid(0, 2).join("; ");
    statusBar()->addWidget(new QLabel(status), 1);

    // The worker thread calls this between chunks of work: the bar moves in the GUI
    // thread, and the answer stops the call when Cancel was pressed.
    ctx_.set_progress([this](const char *, double fraction) {
        QMetaObject::invokeMethod(
            progress_, [bar = progress_, fraction] { bar->setValue(int(fraction * 1000)); },
            Qt::QueuedConnection);
        return cancel_requested_.load();
    });

    connect(run_button_, &QPushButton::clicked, this, [this] { run(); });
    connect(cancel_button_, &QPushButton::clicked, this, [this] { cancel(); });
    show_results(section_.samples, section_.samples);
    resize(1200, 700);
}

MainWindow::~MainWindow() {
    cancel();
    if (worker_ != nullptr) {
        worker_->wait();
    }
}

bool MainWindow::set_method(const QString &name) {
    const int i = method_->findData(name);
    if (i >= 0) {
        method_->setCurrentIndex(i);
    }
    return i >= 0;
}

void MainWindow::set_noise_db(double snr_db) { noise_->setValue(snr_db); }

void MainWindow::cancel() { cancel_requested_ = true; }

int MainWindow::progress_permille() const { return progress_->value(); }

QString MainWindow::progress_text() const { return progress_->text(); }

void MainWindow::press_cancel() { cancel_button_->click(); }

void MainWindow::run(Finished finished) {
    if (worker_ != nullptr) {
        return;
    }
    cancel_requested_ = false;
    run_button_->setEnabled(false);
    cancel_button_->setEnabled(true);
    progress_->setValue(0);
    progress_->setFormat("%p%");
    const QString method = method_->currentData().toString();
    const double snr_db = noise_->value();
    worker_ = QThread::create([this, method, snr_db, finished] {
        QString outcome = "ok";
        std::vector<float> input, output;
        try {
            input = with_noise(section_.samples, snr_db);
            output = method == "dwt" ? dwt_denoise(ctx_, section_, input)
                                     : fx_decon(ctx_, section_, input);
        } catch (const seisgpu::error &e) {
            outcome = e.status() == SG_ERR_CANCELLED ? QString("cancelled") : QString(e.what());
        } catch (const std::exception &e) {
            outcome = e.what();
        }
        QMetaObject::invokeMethod(
            this,
            [this, outcome, finished, input = std::move(input), output = std::move(output)] {
                worker_->wait();
                worker_->deleteLater();
                worker_ = nullptr;
                run_button_->setEnabled(true);
                cancel_button_->setEnabled(false);
                if (outcome == "ok") {
                    show_results(input, output);
                } else {
                    // "cancelled", or the error; the panels keep the last good run.
                    progress_->setFormat(outcome);
                }
                if (finished) {
                    finished(outcome);
                }
            },
            Qt::QueuedConnection);
    });
    worker_->start();
}

void MainWindow::show_results(const std::vector<float> &input, const std::vector<float> &output) {
    std::vector<float> removed(input.size());
    for (std::size_t i = 0; i < input.size(); ++i) {
        removed[i] = input[i] - output[i];
    }
    // One amplitude scale for the three panels: the 99th percentile of |before|.
    std::vector<float> magnitude(input.size());
    std::transform(input.begin(), input.end(), magnitude.begin(),
                   [](float v) { return std::fabs(v); });
    const std::size_t k = magnitude.size() * 99 / 100;
    std::nth_element(magnitude.begin(), magnitude.begin() + std::ptrdiff_t(k), magnitude.end());
    const float clip = std::max(magnitude[k], 1e-30f);
    const std::size_t nt = section_.n_traces, ns = section_.n_samples;
    before_->show_section(input, nt, ns, clip);
    after_->show_section(output, nt, ns, clip);
    removed_->show_section(removed, nt, ns, clip);
}
