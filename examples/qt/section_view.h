// One panel: a section drawn in gray levels (traces across, time down) under a title,
// clipped at ±clip so that several panels share one amplitude scale.
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>

#include "segy.h"

class SectionView : public QWidget {
public:
    explicit SectionView(const QString &title, QWidget *parent = nullptr);
    void show_section(const std::vector<float> &samples, std::size_t n_traces,
                      std::size_t n_samples, float clip);
    void clear();

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString title_;
    QImage image_;
};
