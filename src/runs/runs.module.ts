import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { RunStreamService } from './run-stream.service';
import { RunsController } from './runs.controller';
import { RunsService } from './runs.service';
import { TransitionBus } from './transition-bus.service';

@Module({
  imports: [AuthModule, CatalogModule],
  controllers: [RunsController],
  providers: [RunsService, RunStreamService, TransitionBus],
  exports: [RunsService],
})
export class RunsModule {}
