// seisgpu_qt [--run dwt|fx [--cancel]] [--noise DB] [--screenshot FILE] [SECTION.sgy]
//
// Without --run: the window, for a person. With --run: processes the section once,
// saves a screenshot of the window to FILE if given, and exits 0 on success, 1 when a
// call fails or the screenshot cannot be written, 2 for bad arguments. With --cancel, a
// timer first presses Cancel while a run is in progress, before its first report (which
// comes after the first chunk of work, so the stop is seen however short the call); that run must end "cancelled" (and the bar say so), then the same window runs
// again to the end as above (1 otherwise). Runs headless under QT_QPA_PLATFORM=offscreen.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "main_window.h"

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    QCommandLineParser args;
    args.setApplicationDescription("Denoise a SEG-Y section with seisgpu");
    args.addHelpOption();
    args.addOption({"run", "Process once with METHOD (dwt or fx), then exit.", "METHOD"});
    args.addOption({"noise", "Add Gaussian noise at this SNR (dB; 0: none).", "DB", "5"});
    args.addOption({"screenshot", "With --run: save the window to FILE.", "FILE"});
    args.addOption({"cancel", "With --run: cancel a first run once progress has started."});
    args.addPositionalArgument("section", "SEG-Y file (default: the Penobscot crossline)");
    args.process(app);

    const QString path = args.positionalArguments().value(
        0, "data/penobscot-xl1155/penobscot_xl1155.sgy");
    Section section;
    try {
        section = read_segy(path.toStdString());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    std::unique_ptr<MainWindow> window;
    try {
        window = std::make_unique<MainWindow>(std::move(section), QFileInfo(path).fileName());
    } catch (const seisgpu::error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    bool ok = false;
    window->set_noise_db(args.value("noise").toDouble(&ok));
    if (!ok) {
        std::fprintf(stderr, "error: --noise wants a number of dB\n");
        return 2;
    }
    window->show();
    if (!args.isSet("run")) {
        return app.exec();
    }
    if (!window->set_method(args.value("run"))) {
        std::fprintf(stderr, "error: --run wants dwt or fx\n");
        return 2;
    }
    const QString screenshot = args.value("screenshot");
    int status = 1;
    const auto to_the_end = [&](const QString &outcome) {
        std::printf("run %s: %s\n", qPrintable(args.value("run")), qPrintable(outcome));
        status = outcome == "ok" ? 0 : 1;
        if (status == 0 && !screenshot.isEmpty() && !window->grab().save(screenshot)) {
            std::fprintf(stderr, "error: cannot write %s\n", qPrintable(screenshot));
            status = 1;
        }
        app.quit();
    };
    QTimer::singleShot(0, window.get(), [&] {
        if (!args.isSet("cancel")) {
            window->run(to_the_end);
            return;
        }
        window->run([&](const QString &outcome) {
            std::printf("run %s with Cancel: %s; the bar reads \"%s\"\n",
                        qPrintable(args.value("run")), qPrintable(outcome),
                        qPrintable(window->progress_text()));
            if (outcome != "cancelled" || window->progress_text() != "cancelled") {
                std::fprintf(stderr, "error: the run was not reported cancelled\n");
                app.quit();
                return;
            }
            window->run(to_the_end);
        });
        QTimer::singleShot(0, window.get(), [&] {
            std::printf("Cancel pressed at %.1f %%\n", window->progress_permille() / 10.0);
            window->press_cancel();
        });
    });
    app.exec();
    return status;
}
