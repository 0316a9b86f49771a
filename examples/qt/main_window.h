// The window: a SEG-Y section, a method (DWT denoising or F-X decon), optional added
// noise, Run and Cancel, a progress bar; before / after / removed noise side by side; the
// seisgpu backend in the status bar. The work runs on a worker thread; seisgpu's progress
// callback feeds the bar and answers the Cancel button.
#pragma once

#include <QMainWindow>
#include <atomic>
#include <functional>
#include <vector>

#include "seisgpu.hpp"
#include "segy.h"

class QComboBox;
class QDoubleSpinBox;
class QProgressBar;
class QPushButton;
class QThread;
class SectionView;

class MainWindow : public QMainWindow {
public:
    // The outcome of one run: "ok", "cancelled" or an error message.
    using Finished = std::function<void(const QString &outcome)>;

    MainWindow(Section section, const QString &file_name);
    ~MainWindow() override;

    // "dwt" or "fx"; false for another name.
    bool set_method(const QString &name);
    void set_noise_db(double snr_db);
    // Starts a run; `finished` is called on the GUI thread when it ends.
    void run(Finished finished = {});
    void cancel();
    // For the scripted runs: the bar's value (0…1000) and text, and a click on Cancel
    // (as a person's: only while the button is enabled).
    int progress_permille() const;
    QString progress_text() const;
    void press_cancel();

private:
    void show_results(const std::vector<float> &input, const std::vector<float> &output);

    Section section_;
    seisgpu::context ctx_;
    std::atomic<bool> cancel_requested_{false};
    QThread *worker_ = nullptr;
    QComboBox *method_;
    QDoubleSpinBox *noise_;
    QPushButton *run_button_, *cancel_button_;
    QProgressBar *progress_;
    SectionView *before_, *after_, *removed_;
};
