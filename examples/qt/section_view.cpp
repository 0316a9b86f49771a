#include "section_view.h"

#include <QPainter>
#include <algorithm>

SectionView::SectionView(const QString &title, QWidget *parent)
    : QWidget(parent), title_(title) {
    setMinimumSize(240, 300);
}

void SectionView::show_section(const std::vector<float> &samples, std::size_t n_traces,
                               std::size_t n_samples, float clip) {
    image_ = QImage(int(n_traces), int(n_samples), QImage::Format_Grayscale8);
    for (std::size_t i = 0; i < n_samples; ++i) {
        uchar *row = image_.scanLine(int(i));
        for (std::size_t t = 0; t < n_traces; ++t) {
            // Black for +clip and above, white for −clip and below.
            const float v = std::clamp(samples[t * n_samples + i] / clip, -1.0f, 1.0f);
            row[t] = uchar(127.5f - 127.5f * v);
        }
    }
    update();
}

void SectionView::clear() {
    image_ = QImage();
    update();
}

void SectionView::paintEvent(QPaintEvent *) {
    QPainter p(this);
    p.fillRect(rect(), palette().window());
    const int title_height = fontMetrics().height() + 6;
    p.drawText(QRect(0, 0, width(), title_height), Qt::AlignCenter, title_);
    const QRect area(0, title_height, width(), height() - title_height);
    if (image_.isNull()) {
        p.drawText(area, Qt::AlignCenter, tr("(nothing yet)"));
        return;
    }
    p.drawImage(area, image_);
}
